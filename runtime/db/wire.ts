/**
 * A `pg` client's conversation with its server session, pipelined. Every statement goes over the
 * extended protocol with its values as bound parameters: one statement per Parse, so a string holding
 * several (`commit; insert …`, an injection's favourite) is refused by the server. Statements are
 * written back to back and followed by Flush, not Sync: each result comes back as soon as it is ready
 * while the conversation — and the transaction in it — goes on, so a transaction's prelude, its first
 * statement and the previous transaction's end travel in one write and cost one round trip.
 *
 * A conversation ends with a Sync (written when fw asks for one, or at once when a statement fails:
 * the server then skips everything up to the Sync, and those statements are answered as skipped).
 * While it lasts, `pg`'s client routes every message of the session to it; afterwards `pg` takes the
 * client back, and the next `send` starts a new conversation, which `pg` submits once the Sync is
 * answered.
 *
 * @example
 *   const wire = new Wire(client);
 *   const [begin, row] = await wire.send([{ sql: 'begin', parameters: [] }, { sql: 'select $1::int as n', parameters: [1] }]);
 */
import pg from 'pg';

/** What `pg` exports at run time for building results and serialising values (untyped by @types/pg). */
interface ResultBuilder {
  command: string | null;
  rowCount: number | null;
  rows: Record<string, unknown>[];
  addFields(fields: unknown[]): void;
  parseRow(fields: unknown[]): Record<string, unknown>;
  addRow(row: Record<string, unknown>): void;
  addCommandComplete(message: { text: string }): void;
}
const runtime = pg as unknown as {
  Result: new (rowMode: undefined, types: unknown) => ResultBuilder;
  utils: { prepareValue(value: unknown): unknown };
};

export interface Statement {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

export interface StatementResult {
  /** The command tag's first word(s): `SELECT`, `INSERT`, `COMMIT`, … */
  command: string;
  rowCount: number | null;
  rows: Record<string, unknown>[];
}

export type Outcome = { ok: true; result: StatementResult } | { ok: false; error: Error; skipped: boolean };

/** A statement the server never ran because an earlier one in the same pipeline failed. */
export class SkippedStatement extends Error {
  constructor(cause: Error) {
    super(`skipped after an earlier statement failed: ${cause.message}`, { cause });
    this.name = 'SkippedStatement';
  }
}

export class Wire {
  readonly #client: pg.ClientBase;
  #open: Conversation | undefined;

  constructor(client: pg.ClientBase) {
    this.#client = client;
  }

  /**
   * Writes `statements` after everything sent before, and answers each in order. With `sync` the
   * conversation ends after them (a Sync is written); otherwise they are flushed and it goes on.
   * Values are serialised as `pg` does before anything is written, so a value it cannot send fails
   * that call alone.
   */
  send(statements: readonly Statement[], { sync = false }: { sync?: boolean } = {}): Promise<Outcome[]> {
    const prepared = statements.map((statement) => ({ sql: statement.sql, values: statement.parameters.map((value) => runtime.utils.prepareValue(value)) }));
    let conversation = this.#open;
    if (!conversation?.accepting) {
      conversation = this.#open = new Conversation(this.#client);
      // pg submits it now when the client is idle, else once the previous conversation's Sync is answered.
      this.#client.query(conversation as unknown as pg.Submittable);
    }
    return conversation.write(prepared, sync);
  }

  /** The transaction status of the last Sync answered: `I` idle, `T` in a transaction, `E` in a failed one. */
  status(): string | null {
    return (this.#client as unknown as { getTransactionStatus(): string | null }).getTransactionStatus();
  }
}

interface Pending {
  sql: string;
  values: unknown[];
  result?: ResultBuilder;
  settle(outcome: Outcome): void;
}

/** pg's view of the connection (its protocol writer), as much of it as this uses. */
interface ProtocolWriter {
  stream: { cork?(): void; uncork?(): void };
  parse(query: { text: string; name?: string; types?: unknown[] }): void;
  bind(config: { portal?: string; statement?: string; values?: unknown[] }): void;
  describe(message: { type: 'P' | 'S'; name?: string }): void;
  execute(config: { portal?: string; rows?: number }): void;
  flush(): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

/** One conversation: a `pg` submittable that stays active until its Sync is answered. */
class Conversation {
  /** Written statements awaiting their results, in order. */
  readonly #inFlight: Pending[] = [];
  /** Statements handed over before pg submitted the conversation. */
  #waiting: Array<{ batch: Pending[]; sync: boolean }> = [];
  #connection: ProtocolWriter | undefined;
  #synced = false;
  #failure: Error | undefined;
  readonly #client: pg.ClientBase;

  constructor(client: pg.ClientBase) {
    this.#client = client;
  }

  /** Whether more statements may join: no Sync written and nothing failed. */
  get accepting(): boolean {
    return !this.#synced && !this.#failure;
  }

  write(statements: Array<{ sql: string; values: unknown[] }>, sync: boolean): Promise<Outcome[]> {
    const promises: Array<Promise<Outcome>> = [];
    const batch: Pending[] = statements.map((statement) => {
      let settle!: (outcome: Outcome) => void;
      promises.push(new Promise<Outcome>((resolve) => (settle = resolve)));
      return { ...statement, settle };
    });
    if (sync) this.#synced = true;
    if (this.#connection) this.#writeBatch(batch, sync);
    else this.#waiting.push({ batch, sync });
    return Promise.all(promises);
  }

  // ---- pg's Submittable ----

  submit(connection: ProtocolWriter): null {
    this.#connection = connection;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const { batch, sync } of waiting) this.#writeBatch(batch, sync);
    return null;
  }

  handleRowDescription(message: { fields: unknown[] }): void {
    const pending = this.#inFlight[0];
    if (!pending) return;
    pending.result = new runtime.Result(undefined, this.#client);
    pending.result.addFields(message.fields);
  }

  handleDataRow(message: { fields: unknown[] }): void {
    const result = this.#inFlight[0]?.result;
    if (result) result.addRow(result.parseRow(message.fields));
  }

  handleCommandComplete(message: { text: string }): void {
    const pending = this.#inFlight.shift();
    if (!pending) return;
    const result = pending.result ?? new runtime.Result(undefined, this.#client);
    result.addCommandComplete(message);
    pending.settle({ ok: true, result: { command: result.command ?? '', rowCount: result.rowCount, rows: result.rows } });
  }

  handleEmptyQuery(): void {
    this.#inFlight.shift()?.settle({ ok: true, result: { command: '', rowCount: null, rows: [] } });
  }

  handleError(error: Error): void {
    // pg has already let go of this conversation. Whatever was not answered is settled here: the first
    // with the error, the rest as skipped (the server skips everything up to a Sync).
    this.#failure = error;
    const unanswered = [...this.#inFlight.splice(0), ...this.#waiting.splice(0).flatMap(({ batch }) => batch)];
    unanswered.forEach((pending, index) =>
      pending.settle(index === 0 ? { ok: false, error, skipped: false } : { ok: false, error: new SkippedStatement(error), skipped: true }),
    );
    // A server error leaves the session skipping until a Sync; a broken connection has no session left.
    if (!this.#synced && this.#connection && error instanceof pg.DatabaseError) {
      this.#synced = true;
      this.#connection.sync();
    }
  }

  handleReadyForQuery(): void {
    // Only after a Sync this conversation wrote; anything unanswered was never run.
    const error = new Error('fw: the server ended the conversation before answering this statement.');
    for (const pending of this.#inFlight.splice(0)) pending.settle({ ok: false, error: new SkippedStatement(error), skipped: true });
  }

  handlePortalSuspended(): void {}

  handleCopyInResponse(connection: ProtocolWriter): void {
    connection.sendCopyFail('fw: COPY FROM STDIN is not available in a request transaction.');
  }

  handleCopyData(): void {}

  // ---- writing ----

  #writeBatch(batch: Pending[], sync: boolean): void {
    const connection = this.#connection!;
    if (this.#failure) {
      for (const pending of batch) pending.settle({ ok: false, error: new SkippedStatement(this.#failure), skipped: true });
      return;
    }
    connection.stream.cork?.();
    try {
      for (const pending of batch) {
        connection.parse({ text: pending.sql, name: '', types: [] });
        connection.bind({ portal: '', statement: '', values: pending.values });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '', rows: 0 });
        this.#inFlight.push(pending);
      }
      if (sync) connection.sync();
      else connection.flush();
    } finally {
      connection.stream.uncork?.();
    }
  }
}
