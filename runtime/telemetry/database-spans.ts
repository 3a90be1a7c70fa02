import type { LogEvent, OperationNode } from 'kysely';
import { keepingTraceNotes, noteStatement } from './trace-notes.ts';
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
 * that issued it — statements outside any traced work (fw's own polling) record nothing. Each is named
 * by its statement and table (`INSERT notes`). The statement text is kept for queries Kysely built
 * (their values are `$n` parameters, never recorded); raw SQL (`sql\`…\``, `sql.raw`) may carry values,
 * so its span gives only its operation and the table it names — fw dev keeps its text beside the span
 * for the dashboard (trace-notes.ts), in memory, never exported.
 */
export function logStatementSpan(dialect: 'postgres' | 'pglite'): (event: LogEvent) => void {
  return (event) => {
    if (!spanRecordingNow()) return;
    const node = event.query.query as OperationNode;
    const built = operations[node.kind];
    const raw = built ? undefined : rawStatement(event.query.sql);
    const operation = built ?? raw!.operation;
    const table = built ? tableOf(node) : raw!.table;
    const ids = recordFinishedSpan(
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
    if (!built && keepingTraceNotes()) noteStatement(ids.traceId, ids.spanId, event.query.sql);
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

// An identifier, maybe quoted and schema-qualified: `notes`, `"public"."_fw_outbox"`.
const NAME = String.raw`((?:"[^"]+"|[A-Za-z_][\w$]*)(?:\s*\.\s*(?:"[^"]+"|[A-Za-z_][\w$]*))?)`;
const WRITES: Array<[string, RegExp]> = [
  ['INSERT', new RegExp(String.raw`\binsert\s+into\s+${NAME}`, 'i')],
  ['UPDATE', new RegExp(String.raw`\bupdate\s+${NAME}\s+(?:as\s+\w+\s+|\w+\s+)?set\b`, 'i')],
  ['DELETE', new RegExp(String.raw`\bdelete\s+from\s+${NAME}`, 'i')],
];
const READ = new RegExp(String.raw`\bfrom\s+${NAME}`, 'i');
const CALL = new RegExp(String.raw`^\s*select\s+${NAME}\s*\(`, 'i');

/**
 * A raw statement's operation and table, read from its text: a `WITH` that writes is named by its write
 * (`INSERT _fw_workflow_steps`), a read by its first table, a `select f(…)` by its function. Only names
 * are taken — string literals are blanked first, so no value becomes a span's name.
 */
export function rawStatement(text: string): { operation: string; table?: string } {
  const plain = text.replace(/'(?:[^']|'')*'/g, "''").replace(/--[^\n]*/g, '');
  const verb = /^\s*(\w+)/.exec(plain)?.[1]?.toUpperCase() ?? 'SQL';
  if (verb !== 'SELECT' && verb !== 'WITH' && verb !== 'INSERT' && verb !== 'UPDATE' && verb !== 'DELETE') return { operation: verb };
  for (const [operation, pattern] of WRITES) {
    const found = pattern.exec(plain);
    if (found && (verb === 'WITH' || verb === operation)) return { operation, table: bare(found[1]!) };
  }
  const read = READ.exec(plain) ?? CALL.exec(plain);
  return read ? { operation: 'SELECT', table: bare(read[1]!) } : { operation: verb === 'WITH' ? 'SELECT' : verb };
}

/** `"public"."notes"` → `notes`; `_fw.enqueue` stays qualified (fw's own schema says what it is). */
function bare(name: string): string {
  const parts = name.split('.').map((part) => part.trim().replace(/^"|"$/g, ''));
  return parts[0] === 'public' ? parts.slice(1).join('.') : parts.join('.');
}
