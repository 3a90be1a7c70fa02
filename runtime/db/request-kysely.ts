/**
 * A Kysely whose statements run in the request transaction its holder currently has
 * (request-transaction.ts): one per pooled connection, made once. It cannot open transactions of its
 * own — every entry already runs in one (database.ts guards `ctx.db.transaction()` with a clear error).
 */
import type { CompiledQuery, Kysely, QueryResult } from 'kysely';
import { FwError } from '../core/errors.ts';
import { logStatementSpan } from '../telemetry/database-spans.ts';
import { insideTransactionKysely } from './postgres-kysely.ts';
import type { RequestTransaction } from './request-transaction.ts';

export interface TransactionHolder {
  /** The transaction this connection's statements go to, while one runs. */
  current: RequestTransaction | undefined;
}

export function requestKysely(holder: TransactionHolder, dialect: 'postgres' | 'pglite'): Kysely<any> {
  return insideTransactionKysely(
    async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
      const transaction = holder.current;
      if (!transaction) throw new FwError('internal', 'fw: a statement arrived on a request connection outside any transaction.');
      const { command, rowCount, rows } = await transaction.execute(query.sql, query.parameters);
      const changes = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
      return { rows: rows as R[], ...(changes ? { numAffectedRows: BigInt(rowCount ?? 0) } : {}) };
    },
    { inside: 'a request transaction', why: 'every entry already runs in its own transaction' },
    logStatementSpan(dialect),
  );
}
