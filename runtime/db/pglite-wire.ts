/**
 * The statement sender of request transactions on PGlite (the embedded database runs in this process,
 * so there is nothing to pipeline): each statement goes through `pglite.query`, over the extended
 * protocol with bound parameters like on PostgreSQL — several statements in one string are refused
 * there too. As on PostgreSQL, the statements after a failing one in the same call are skipped.
 */
import type { PGlite } from '@electric-sql/pglite';
import type { StatementSender } from './request-transaction.ts';
import { type Outcome, SkippedStatement, type Statement } from './wire.ts';

export function pgliteWire(pglite: PGlite): StatementSender {
  return {
    async send(statements: readonly Statement[]): Promise<Outcome[]> {
      const outcomes: Outcome[] = [];
      let failure: Error | undefined;
      for (const statement of statements) {
        if (failure) {
          outcomes.push({ ok: false, error: new SkippedStatement(failure), skipped: true });
          continue;
        }
        try {
          const result = await pglite.query<Record<string, unknown>>(statement.sql, statement.parameters as unknown[]);
          const command = result.command?.toUpperCase() ?? '';
          outcomes.push({ ok: true, result: { command, rowCount: result.affectedRows ?? result.rows.length, rows: result.rows } });
        } catch (error) {
          failure = error as Error;
          outcomes.push({ ok: false, error: failure, skipped: false });
        }
      }
      return outcomes;
    },
  };
}
