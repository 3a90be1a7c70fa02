import type { LogEvent, OperationNode } from 'kysely';
import { recordFinishedSpan, SpanKind, spanRecordingNow } from './tracing.ts';

const operations: Record<string, string> = {
  SelectQueryNode: 'SELECT',
  InsertQueryNode: 'INSERT',
  UpdateQueryNode: 'UPDATE',
  DeleteQueryNode: 'DELETE',
  MergeQueryNode: 'MERGE',
};

/**
 * Kysely's `log` hook as a span per statement (OpenTelemetry's database conventions), under the span
 * that issued it — statements outside any traced work (fw's own polling) record nothing. The statement
 * text is kept for queries Kysely built (their values are `$n` parameters, never recorded); raw SQL
 * (`sql\`…\``, `sql.raw`) may carry values, so it gives only its operation.
 */
export function logStatementSpan(dialect: 'postgres' | 'pglite'): (event: LogEvent) => void {
  return (event) => {
    if (!spanRecordingNow()) return;
    const node = event.query.query as OperationNode;
    const built = operations[node.kind];
    const operation = built ?? /^\s*(\w+)/.exec(event.query.sql)?.[1]?.toUpperCase() ?? 'SQL';
    const table = built ? tableOf(node) : undefined;
    recordFinishedSpan(
      table ? `${operation} ${table}` : operation,
      SpanKind.CLIENT,
      event.queryDurationMillis,
      {
        'db.system.name': 'postgresql',
        'db.operation.name': operation,
        ...(table ? { 'db.collection.name': table } : {}),
        ...(built ? { 'db.query.text': event.query.sql } : {}),
        ...(dialect === 'pglite' ? { 'fw.database': 'pglite' } : {}),
      },
      event.level === 'error' ? event.error : undefined,
    );
  };
}

/** The statement's main table: the one it reads from, inserts into, updates or deletes from. */
function tableOf(node: OperationNode): string | undefined {
  const n = node as unknown as { into?: TableLike; table?: TableLike; from?: { froms?: TableLike[] } };
  const first = n.into ?? n.table ?? n.from?.froms?.[0];
  return first?.kind === 'TableNode' ? first.table?.identifier?.name : undefined;
}

interface TableLike {
  kind: string;
  table?: { identifier?: { name: string } };
}
