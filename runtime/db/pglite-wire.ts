/**
 * The statement sender of request transactions on PGlite (the embedded database runs in this process).
 * Each call writes its statements as one extended-protocol batch — Parse/Bind/Describe/Execute per
 * statement, one Sync — and hands it to the engine in one call: `pglite.query` would make six calls
 * per statement (and write the data directory after each). As on PostgreSQL, every statement is parsed
 * on its own (several in one string are refused), its values are bound parameters serialised as `pg`
 * does (so both databases see the same text), and the statements after a failing one are skipped.
 */
import { parse, type PGlite, protocol } from '@electric-sql/pglite';
import pg from 'pg';
import type { StatementSender } from './request-transaction.ts';
import { type Outcome, SkippedStatement, type Statement, type StatementResult } from './wire.ts';

const prepareValue = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils.prepareValue;

interface BackendMessage {
  name: string;
}

export function pgliteWire(pglite: PGlite): StatementSender {
  return {
    async send(statements: readonly Statement[], { sync = false }: { sync?: boolean } = {}): Promise<Outcome[]> {
      const messages: Uint8Array[] = [];
      for (const statement of statements) {
        messages.push(
          protocol.serialize.parse({ text: statement.sql, types: [] }),
          protocol.serialize.bind({ values: statement.parameters.map((value) => prepareValue(value) as string | null) }),
          protocol.serialize.describe({ type: 'P' }),
          protocol.serialize.execute({}),
        );
      }
      messages.push(protocol.serialize.sync());
      const replies = (await pglite.runExclusive(() => pglite.execProtocolStream(concat(messages), { syncToFs: false, throwOnError: false }))) as unknown as BackendMessage[];
      const outcomes = outcomesOf(replies, statements.length, pglite);
      // The end of a transaction: what it wrote goes to the data directory, as pglite.query would.
      if (sync) await pglite.syncToFs();
      return outcomes;
    },
  };
}

/** Splits the engine's replies into one outcome per statement: its result, its error, or skipped. */
function outcomesOf(replies: BackendMessage[], count: number, pglite: PGlite): Outcome[] {
  const outcomes: Outcome[] = [];
  let current: BackendMessage[] = [];
  let failure: Error | undefined;
  for (const reply of replies) {
    if (outcomes.length >= count) break;
    if (reply.name === 'error') {
      failure = reply as unknown as Error;
      outcomes.push({ ok: false, error: failure, skipped: false });
      break;
    }
    current.push(reply);
    if (reply.name === 'commandComplete' || reply.name === 'emptyQuery') {
      outcomes.push({ ok: true, result: resultOf(current, pglite) });
      current = [];
    }
  }
  const cause = failure ?? new Error('fw: PGlite did not answer this statement.');
  while (outcomes.length < count) outcomes.push({ ok: false, error: new SkippedStatement(cause), skipped: true });
  return outcomes;
}

function resultOf(replies: BackendMessage[], pglite: PGlite): StatementResult {
  const [result] = parse.parseResults(replies as never, pglite.parsers);
  const command = result?.command?.toUpperCase() ?? '';
  return { command, rowCount: result?.affectedRows ?? result?.rows.length ?? null, rows: (result?.rows ?? []) as Record<string, unknown>[] };
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
