/**
 * The pool of request connections (PostgreSQL), logged in as the request login role
 * (request-login.ts). Each connection keeps what its transactions need to know about it (its session,
 * the next transaction number, a read's deferred ROLLBACK; request-transaction.ts), its pipelined wire
 * (wire.ts) and one Kysely (request-kysely.ts).
 *
 * A read's ROLLBACK waits for the connection's next use, so that it travels in the same write as the
 * next BEGIN; a connection nobody takes within {@link IDLE_END_MS} sends it on its own (with a release
 * of session locks), so an idle connection never holds a snapshot or a lock for long.
 */
import type { Kysely } from 'kysely';
import type pg from 'pg';
import { FwError } from '../core/errors.ts';
import { requestKysely, type TransactionHolder } from './request-kysely.ts';
import type { RequestConnection } from './request-transaction.ts';
import { Wire } from './wire.ts';

/** How long a released connection keeps a read's ROLLBACK for its next use. */
export const IDLE_END_MS = 1;

export interface PooledConnection extends TransactionHolder {
  readonly state: RequestConnection;
  readonly kysely: Kysely<any>;
}

export interface RequestPool {
  /** Runs `fn` with a connection of its own; the connection goes back to the pool afterwards. */
  run<R>(fn: (connection: PooledConnection) => Promise<R>): Promise<R>;
  /** The pool's connections: all, idle, and callers waiting for one. */
  counts(): { totalCount: number; idleCount: number; waitingCount: number };
  end(): Promise<void>;
}

interface Entry extends PooledConnection {
  idle: NodeJS.Timeout | undefined;
}

export function createRequestPool(pgModule: typeof pg, url: string, max: number): RequestPool {
  const pool = new pgModule.Pool({ connectionString: url, max });
  pool.on('error', (error) => console.error(`fw: idle PostgreSQL connection error: ${error.message}`));
  const entries = new WeakMap<pg.PoolClient, Entry>();

  const entryOf = (client: pg.PoolClient): Entry => {
    let entry = entries.get(client);
    if (!entry) {
      const holder: Entry = {
        state: { wire: new Wire(client), session: null, nextClaim: null, tail: [], broken: false },
        kysely: undefined as unknown as Kysely<any>,
        current: undefined,
        idle: undefined,
      };
      (holder as { kysely: Kysely<any> }).kysely = requestKysely(holder, 'postgres');
      // pg-pool listens for errors only while a client is idle; a session that dies while a request
      // holds it must not crash the process (its statements fail, and the client is not pooled again).
      client.on('error', () => (holder.state.broken = true));
      entries.set(client, (entry = holder));
    }
    return entry;
  };

  /** Sends a deferred ROLLBACK on its own, releasing the session's locks too. */
  const endIdle = (entry: Entry): void => {
    entry.idle = undefined;
    const { state } = entry;
    if (state.tail.length === 0 || state.broken) return;
    const tail = state.tail.splice(0);
    void state.wire.send([...tail, { sql: 'select pg_catalog.pg_advisory_unlock_all()', parameters: [] }], { sync: true }).then((outcomes) => {
      if (outcomes.some((outcome) => !outcome.ok)) state.broken = true;
    });
  };

  return {
    async run(fn) {
      const client = await pool.connect();
      const entry = entryOf(client);
      if (entry.idle) clearTimeout(entry.idle);
      entry.idle = undefined;
      let failed: Error | undefined;
      try {
        return await fn(entry);
      } catch (error) {
        // A connection whose session broke (terminated, protocol error) must not be pooled again.
        if (isBrokenConnection(error)) failed = error as Error;
        throw error;
      } finally {
        entry.current = undefined;
        if (entry.state.broken && !failed) failed = new FwError('internal', 'fw: the request connection was left in an unknown state.');
        if (!failed && entry.state.tail.length > 0) (entry.idle = setTimeout(endIdle, IDLE_END_MS, entry)).unref();
        client.release(failed);
      }
    },
    counts: () => ({ totalCount: pool.totalCount, idleCount: pool.idleCount, waitingCount: pool.waitingCount }),
    async end() {
      // A deferred ROLLBACK needs no sending: ending the session ends its transaction.
      await pool.end();
    },
  };
}

/** SQLSTATE class 08 (connection exception), the shutdown/termination codes, or pg's own connection errors. */
export function isBrokenConnection(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03';
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause && cause !== error && isBrokenConnection(cause)) return true;
  return /Connection terminated|not queryable|ECONNRESET|EPIPE/.test(String((error as Error | null)?.message ?? ''));
}
