import { type CompiledQuery, type DatabaseConnection, type Driver, type Kysely, type QueryResult, type TransactionSettings } from 'kysely';
import { postgresKysely } from './postgres-kysely.ts';
import type { Auth } from '../core/entry-types.ts';
import type { FwDatabase } from './database.ts';

export interface AutocommitOptions {
  auth: Auth;
  traceId: string;
  /** What runs, for errors about its SQL: `action triageTicket`. */
  label?: string;
}

/**
 * Kysely for code that runs outside a request (actions): every statement runs in a short transaction
 * of its own through `db.transaction` — as the app role, with the caller's tenant set, so row-level
 * security and the live capture triggers apply exactly as in a command — and commits at once.
 * `kysely.transaction().execute(fn)` groups statements in one such transaction.
 *
 * Why not one transaction around the whole handler: an action calls models and services. A
 * transaction held open across a model call would own PGlite's only connection (the AI trace and any
 * tool call would wait for it forever) and, on PostgreSQL, hold back the horizon that live queries
 * and vacuum depend on.
 *
 * @example
 *   const db = createAutocommitKysely(fw, { auth, traceId });
 *   await db.insertInto('notes').values({ title }).execute();   // committed here
 */
export function createAutocommitKysely(db: FwDatabase, options: AutocommitOptions): Kysely<any> {
  return postgresKysely(new AutocommitDriver(db, options));
}

class AutocommitDriver implements Driver {
  readonly #db: FwDatabase;
  readonly #options: AutocommitOptions;
  constructor(db: FwDatabase, options: AutocommitOptions) {
    this.#db = db;
    this.#options = options;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new AutocommitConnection(this.#db, this.#options);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (settings.isolationLevel) {
      // fw's transaction prelude runs a statement first, after which PostgreSQL refuses SET TRANSACTION ISOLATION.
      throw new TypeError('fw: ctx.db.transaction() runs at READ COMMITTED; setIsolationLevel() is not supported here.');
    }
    await (connection as AutocommitConnection).begin(settings.accessMode === 'read only');
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as AutocommitConnection).finish(true);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as AutocommitConnection).finish(false);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await (connection as AutocommitConnection).finish(false);
  }

  async destroy(): Promise<void> {}
}

const rollbackSignal = Symbol('rollback');

class AutocommitConnection implements DatabaseConnection {
  #open: { trx: Kysely<any>; decide(commit: boolean): void; done: Promise<void> } | undefined;
  readonly #db: FwDatabase;
  readonly #options: AutocommitOptions;
  constructor(db: FwDatabase, options: AutocommitOptions) {
    this.#db = db;
    this.#options = options;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#open) return this.#open.trx.executeQuery<R>(query);
    return this.#db.transaction({ readOnly: false, auth: this.#options.auth, traceId: this.#options.traceId, label: this.#options.label }, (trx) => trx.executeQuery<R>(query));
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    yield await this.executeQuery<R>(query);
  }

  /** Opens a transaction that stays open until `finish`: `db.transaction` is callback-shaped, Kysely's driver is not. */
  async begin(readOnly: boolean): Promise<void> {
    let decide!: (commit: boolean) => void;
    const decision = new Promise<boolean>((resolve) => (decide = resolve));
    let entered!: (trx: Kysely<any>) => void;
    const inside = new Promise<Kysely<any>>((resolve) => (entered = resolve));
    const done = this.#db
      .transaction({ readOnly, auth: this.#options.auth, traceId: this.#options.traceId, label: this.#options.label }, async (trx) => {
        entered(trx);
        if (!(await decision)) throw rollbackSignal;
      })
      .catch((error: unknown) => {
        if (error !== rollbackSignal) throw error;
      });
    // The prelude may fail before the callback runs: then `done` settles first, with its error.
    const trx = await Promise.race([inside, done.then(() => inside)]);
    this.#open = { trx, decide, done };
  }

  async finish(commit: boolean): Promise<void> {
    const open = this.#open;
    if (!open) return;
    this.#open = undefined;
    open.decide(commit);
    await open.done;
  }
}
