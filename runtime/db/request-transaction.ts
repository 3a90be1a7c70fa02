/**
 * A request transaction: BEGIN, the caller's identity claimed (request-identity.ts), the handler's
 * statements, and its end — sent so that a read whose handler runs one statement costs one round trip
 * and a write two.
 *
 * - **Lazy begin.** Nothing is sent until the handler's first statement, which travels in the same
 *   write as BEGIN and the claim (and the previous transaction's deferred end). A handler that runs no
 *   SQL costs nothing. If the claim fails, the transaction is aborted before the statement runs.
 * - **A proof for the next transaction.** Directly connected, fw knows its session's claim counter and
 *   the value the next claim gets (every claim answers its own; only claims draw), so it sends the proof
 *   with the BEGIN. The first transaction on a connection opens the counter first (one round trip more,
 *   once). Should the claim find another value or no counter, it says so, and fw proves again.
 *   Behind a transaction pooler the session is unknown until BEGIN has run, so fw asks first
 *   (`_fw.request_session()`) and claims in the next round trip.
 * - **The end.** A read-only transaction ends with ROLLBACK — it changed nothing, and a rollback also
 *   undoes every setting its SQL made — sent ahead of the connection's next use (or after a moment of
 *   idleness, request-pool.ts). A write resets what its SQL may have left in the session
 *   (`_fw.end_request()`) and commits, in one round trip, and is answered once the commit is.
 * - **fw's own statements** that write durable work carry a {@link ProofRequest} parameter, which is
 *   filled in with the proof for this transaction's claim when the statement is sent (the claim, and so
 *   the proof, is known only once the transaction begins).
 * - **Handler SQL** goes one statement per call over the extended protocol (wire.ts), so stacked
 *   statements are refused by the server; statements that would end or start a transaction are
 *   refused before they are sent (statement-guard.ts). Both errors name the entry.
 */
import type { KeyObject } from 'node:crypto';
import type { KyselyPlugin } from 'kysely';
import type { Auth } from '../core/entry-types.ts';
import { FwError } from '../core/errors.ts';
import { APP_ROLE } from './app-role.ts';
import { ProofRequest } from './proof-request.ts';
import { ALREADY_CLAIMED, type Identity, identityProof, mismatchTarget, NO_COUNTER, PROOF_MISMATCH, type ProofTarget, type RequestSession, sessionRow, transactionProof } from './request-identity.ts';
import { transactionControl } from './statement-guard.ts';
import type { Outcome, Statement, StatementResult } from './wire.ts';

export interface RequestTransactionOptions {
  readOnly: boolean;
  auth: Auth;
  /** Recorded with the transaction's live invalidations (`fw.trace_id`), for debugging. */
  traceId?: string;
  /** Kysely plugins for this transaction's `trx` (e.g. the live read recorder). */
  plugins?: readonly KyselyPlugin[];
  /** What runs in it, for errors about its SQL: `command createNote`, `liveQuery listNotes`. */
  label?: string;
}

/** Sends statements to a connection's session in order; see wire.ts (PostgreSQL) and pglite-wire.ts. */
export interface StatementSender {
  send(statements: readonly Statement[], options?: { sync?: boolean }): Promise<Outcome[]>;
}

/** What a request transaction knows and leaves behind about the pooled connection it runs on. */
export interface RequestConnection {
  readonly wire: StatementSender;
  /** The server session's claim counter, once known (PostgreSQL). */
  session: RequestSession | null;
  /** The value the counter gives the next claim, when fw knows it (direct connections). */
  nextClaim: bigint | null;
  /** Statements the last transaction left to send first: a read's deferred ROLLBACK. */
  tail: Statement[];
  /** Set when the connection must not be used again (its session is in a state fw does not know). */
  broken: boolean;
}

export interface TransactionSettings {
  statementTimeoutMs: number;
  /** The identity key (PostgreSQL); PGlite proves nothing. */
  key: KeyObject | null;
  /**
   * Ask for the session before proving: behind a transaction pooler, where the next transaction's
   * session is unknown. Set by the transaction itself when a claim finds another session than expected.
   */
  pooled: boolean;
  /**
   * How a read's ROLLBACK goes: `defer`red to the connection's next use (a connection that keeps its
   * session), `send` without waiting (behind a pooler), or `await` (PGlite, where nothing pipelines).
   */
  readEnd: 'defer' | 'send' | 'await';
}

const statement = (sql: string, parameters: readonly unknown[] = []): Statement => ({ sql, parameters });
const ROLLBACK = statement('rollback');
const COMMIT = statement('commit');
/** Resets what a write's SQL may have left in the session (request-identity.ts), before its commit. */
const END_REQUEST = statement('select "_fw"."end_request"()');
const ASK_SESSION = statement('select pid, counter, next from "_fw"."request_session"()');
const OPEN_SESSION = statement('select pid, counter, next from "_fw"."open_session"()');
/** Role, timeout, trace id and the claim, one statement; the role's EXECUTE check runs before the role changes. */
const CLAIM_SQL =
  `select pg_catalog.set_config('role', '${APP_ROLE}', true), pg_catalog.set_config('statement_timeout', $1, true),` +
  ` pg_catalog.set_config('fw.trace_id', $2, true), "_fw"."claim"($3, $4, $5, $6, $7) as claimed`;
/**
 * PGlite proves nothing (one superuser session, request-identity.ts): the same settings, set directly —
 * a plain SELECT is cheaper in the engine than the PL/pgSQL claim.
 */
const PGLITE_CLAIM_SQL =
  `select pg_catalog.set_config('role', '${APP_ROLE}', true), pg_catalog.set_config('statement_timeout', $1, true),` +
  ` pg_catalog.set_config('fw.trace_id', $2, true), pg_catalog.set_config('fw.kind', $3, true), pg_catalog.set_config('fw.tenant_id', coalesce($4, ''), true),` +
  ` pg_catalog.set_config('fw.user_id', coalesce($5, ''), true), pg_catalog.set_config('fw.role', coalesce($6, ''), true), pg_catalog.set_config('fw.identity_verified', 'pglite', true)`;
/** How often fw opens a counter and asks again behind a pooler before it gives up (each try lands somewhere). */
const ASKING_ATTEMPTS = 8;

export class RequestTransaction {
  readonly #connection: RequestConnection;
  readonly #options: RequestTransactionOptions;
  readonly #settings: TransactionSettings;
  #state: 'new' | 'beginning' | 'open' | 'ended' = 'new';
  #begun: Promise<unknown> | undefined;
  /** The most recent statement failed: the transaction is aborted unless a ROLLBACK TO repaired it. */
  #lastFailed = false;
  /** The claim this transaction proved (PostgreSQL): what fw's own statements in it are proven for. */
  #target: ProofTarget | null = null;

  constructor(connection: RequestConnection, options: RequestTransactionOptions, settings: TransactionSettings) {
    this.#connection = connection;
    this.#options = options;
    this.#settings = settings;
  }

  /** Runs one of the handler's statements (the first one with BEGIN and the claim). */
  async execute(sql: string, parameters: readonly unknown[]): Promise<StatementResult> {
    const control = transactionControl(sql);
    if (control) {
      throw new FwError(
        'internal',
        `${this.#label()} sent ${control}, which would end or start a transaction: fw runs every entry in a transaction of its own, under its caller's identity. Remove it; to undo part of the work, use a savepoint (ROLLBACK TO SAVEPOINT).`,
      );
    }
    if (this.#state === 'ended') throw new FwError('internal', `${this.#label()} used ctx.db after its transaction ended (a statement not awaited before the handler returned?).`);
    if (this.#state === 'new') {
      this.#state = 'beginning';
      const first = this.#begin(statement(sql, parameters));
      this.#begun = first.catch(() => undefined);
      return first;
    }
    if (this.#state === 'beginning') await this.#begun;
    const [outcome] = await this.#connection.wire.send([this.#proven(statement(sql, parameters), this.#target)]);
    return this.#settle(outcome!);
  }

  /**
   * Ends the transaction after its handler resolved: a read's ROLLBACK is deferred (or sent without
   * waiting), a write commits and is waited for. Throws when a statement failed and the handler went on.
   */
  async commit(): Promise<void> {
    const state = this.#state;
    this.#state = 'ended';
    if (state === 'new') return;
    if (state === 'beginning') await this.#begun;
    if (this.#lastFailed) {
      await this.#end();
      throw new FwError('internal', 'The transaction was rolled back because a statement in it failed.');
    }
    if (this.#options.readOnly) return this.#end();
    if (!this.#settings.key) {
      // PGlite: one session for everything, nothing to reset (request-identity.ts).
      const [commit] = await this.#connection.wire.send([COMMIT], { sync: true });
      if (!commit!.ok) throw commit!.error;
      if (commit!.result.command !== 'COMMIT') throw new FwError('internal', 'The transaction was rolled back because a statement in it failed.');
      return;
    }
    const [reset, commit] = await this.#connection.wire.send([END_REQUEST, COMMIT], { sync: true });
    if (!reset!.ok) {
      // The commit was skipped: the transaction is aborted and needs its ROLLBACK.
      await this.#end();
      throw new FwError('internal', 'The transaction was rolled back: fw could not reset the session before its commit.', { cause: reset!.error });
    }
    // The write's SQL left something in the temp schema: the counter was made again, with a new start.
    const renewed = (reset!.result.rows[0] as { end_request?: string | null } | undefined)?.end_request;
    if (renewed != null && this.#connection.session && !this.#settings.pooled) this.#know({ pid: this.#connection.session.pid, counter: String(renewed), claim: BigInt(renewed) });
    // A COMMIT that fails (a deferred constraint) or answers ROLLBACK has ended the transaction.
    if (!commit!.ok) throw commit!.error;
    if (commit!.result.command !== 'COMMIT') throw new FwError('internal', 'The transaction was rolled back because a statement in it failed.');
  }

  /** Ends the transaction after its handler threw: whatever was done is rolled back. */
  async rollback(): Promise<void> {
    const state = this.#state;
    this.#state = 'ended';
    if (state === 'new') return;
    if (state === 'beginning') await this.#begun;
    await this.#end();
  }

  // ---- beginning ----

  async #begin(first: Statement): Promise<StatementResult> {
    const connection = this.#connection;
    const settings = this.#settings;
    const begin = statement(this.#options.readOnly ? 'begin read only' : 'begin');
    let tail = connection.tail.splice(0);
    if (!settings.key) {
      // PGlite: nothing to prove.
      const outcomes = await connection.wire.send([...tail, begin, this.#claim(null), this.#proven(first, null)]);
      return this.#opened(outcomes.slice(0, tail.length), outcomes.slice(tail.length));
    }
    if (settings.pooled) return this.#beginAsking(first, tail, begin);
    for (let attempt = 0; ; attempt++) {
      if (!connection.session || connection.nextClaim === null) {
        // The session's counter, made (or found) in a transaction of its own that commits.
        const opened = await connection.wire.send([...tail, OPEN_SESSION], { sync: true });
        this.#checkTail(opened.slice(0, tail.length));
        tail = [];
        this.#learn(opened.at(-1)!);
      }
      const target = (this.#target = { ...connection.session!, claim: connection.nextClaim! });
      const outcomes = await connection.wire.send([...tail, begin, this.#claim(identityProof(settings.key, target, this.#identity())), this.#proven(first, target)]);
      const [head, rest] = [outcomes.slice(0, tail.length), outcomes.slice(tail.length)];
      const claim = rest[1]!;
      const code = claim.ok ? undefined : errorCode(claim.error);
      if (code !== PROOF_MISMATCH && code !== NO_COUNTER) return this.#opened(head, rest);
      const actual = code === PROOF_MISMATCH ? mismatchTarget((claim as { error: { detail?: unknown } }).error.detail) : undefined;
      const session = connection.session!;
      // Another session answered, someone else drew from this session's counter, or the session that just
      // made its counter has none in the next transaction: something pools transactions between fw and
      // PostgreSQL. (Seen on a retry too: the pooler may have kept the first transaction on this session.)
      const pooled = actual
        ? actual.pid !== session.pid || (actual.counter === session.counter && actual.claim !== connection.nextClaim)
        : attempt > 0;
      if (!pooled && attempt > 0) return this.#opened(head, rest);
      this.#checkTail(head);
      // The aborted transaction ends first, whatever is sent next.
      tail = [ROLLBACK];
      if (pooled) {
        // Ask from now on.
        settings.pooled = true;
        settings.readEnd = 'send';
        console.warn('fw: a request transaction landed in another database session than its connection\'s: something pools transactions between fw and PostgreSQL. fw now asks for the session first (one more round trip); set FW_DIRECT_DATABASE_URL to say so.');
        return this.#beginAsking(first, tail, begin);
      }
      if (actual) this.#know(actual);
      else connection.session = null;
    }
  }

  /**
   * BEGIN and ask which counter this transaction's session has, then prove it: two round trips (behind
   * a pooler). A session without a counter gets one, in a transaction of its own, and fw asks again.
   */
  async #beginAsking(first: Statement, tail: Statement[], begin: Statement): Promise<StatementResult> {
    const connection = this.#connection;
    for (let attempt = 0; attempt < ASKING_ATTEMPTS; attempt++) {
      const outcomes = await connection.wire.send([...tail, begin, ASK_SESSION]);
      this.#checkTail(outcomes.slice(0, tail.length));
      const [began, asked] = outcomes.slice(tail.length);
      if (!began!.ok) throw this.#beginFailure(began!.error);
      if (!asked!.ok) throw this.#beginFailure(asked!.error);
      const target = sessionRow(asked!.result.rows[0]);
      if (target) {
        this.#target = target;
        const [claim, result] = await connection.wire.send([this.#claim(identityProof(this.#settings.key!, target, this.#identity())), this.#proven(first, target)]);
        return this.#opened([], [{ ok: true, result: { command: 'BEGIN', rowCount: null, rows: [] } }, claim!, result!]);
      }
      // No counter in the session this transaction got: give that session one, and try again.
      const opened = await connection.wire.send([ROLLBACK, OPEN_SESSION], { sync: true });
      if (!opened[1]!.ok) throw this.#beginFailure(opened[1]!.error);
      tail = [];
    }
    throw this.#beginFailure(new FwError('unavailable', `fw: no database session behind the pooler had a claim counter after ${ASKING_ATTEMPTS} tries.`));
  }

  /** Takes the counter an `_fw.open_session()` answered. */
  #learn(outcome: Outcome): void {
    if (!outcome.ok) throw this.#beginFailure(outcome.error);
    const target = sessionRow(outcome.result.rows[0]);
    if (!target) throw this.#beginFailure(new Error('fw: _fw.open_session() answered no counter.'));
    this.#know(target);
  }

  #know(target: ProofTarget): void {
    this.#connection.session = { pid: target.pid, counter: target.counter };
    this.#connection.nextClaim = target.claim;
  }

  /** Reads the outcomes of the tail, then of BEGIN, the claim and the first statement. */
  #opened(tail: Outcome[], [begin, claim, first]: Outcome[]): StatementResult {
    this.#checkTail(tail);
    if (!begin!.ok) throw this.#beginFailure(begin!.error);
    if (!claim!.ok) throw this.#beginFailure(claim!.error);
    const claimed = (claim!.result.rows[0] as { claimed?: string } | undefined)?.claimed;
    this.#connection.nextClaim = this.#settings.pooled || !this.#settings.key || claimed == null ? null : BigInt(claimed) + 1n;
    this.#state = 'open';
    return this.#settle(first!);
  }

  /** A failed tail means the session is in a state fw cannot vouch for: never use it again. */
  #checkTail(tail: Outcome[]): void {
    const failed = tail.find((outcome) => !outcome.ok);
    if (failed && !failed.ok) {
      this.#connection.broken = true;
      throw new FwError('unavailable', 'The database connection failed before the request could begin; try again.', { cause: failed.error });
    }
  }

  /** The transaction is aborted (the statement after a failed claim never ran). */
  #beginFailure(error: Error): Error {
    this.#lastFailed = true;
    this.#state = 'open';
    const code = errorCode(error);
    if (code === ALREADY_CLAIMED || code === PROOF_MISMATCH || code === NO_COUNTER || code === '42501') {
      return new FwError('internal', `The request transaction could not prove its identity to the database: ${error.message}`, { cause: error });
    }
    return error;
  }

  #claim(proof: string | null): Statement {
    const identity = this.#identity();
    return statement(this.#settings.key ? CLAIM_SQL : PGLITE_CLAIM_SQL, [
      String(this.#settings.statementTimeoutMs),
      this.#options.traceId ?? '',
      identity.kind,
      identity.tenantId,
      identity.userId,
      identity.role,
      ...(this.#settings.key ? [proof] : []),
    ]);
  }

  /** `s` with its {@link ProofRequest} parameters filled in for `target` (null on PGlite, which proves nothing). */
  #proven(s: Statement, target: ProofTarget | null): Statement {
    if (!s.parameters.some((parameter) => parameter instanceof ProofRequest)) return s;
    const key = this.#settings.key;
    const proof = (request: ProofRequest) => (key && target ? transactionProof(key, target, request.purpose, request.message) : null);
    return statement(s.sql, s.parameters.map((parameter) => (parameter instanceof ProofRequest ? proof(parameter) : parameter)));
  }

  #identity(): Identity {
    const { auth } = this.#options;
    return { kind: auth.kind, tenantId: auth.tenantId ?? null, userId: auth.userId ?? null, role: auth.role ?? null };
  }

  // ---- statements ----

  #settle(outcome: Outcome): StatementResult {
    if (outcome.ok) {
      this.#lastFailed = false;
      // Belt and braces behind the guard: a statement that ended the transaction leaves the session unknown.
      if (outcome.result.command === 'COMMIT' || outcome.result.command === 'BEGIN' || outcome.result.command === 'START' || outcome.result.command === 'PREPARE') {
        this.#connection.broken = true;
        this.#lastFailed = true;
        throw new FwError('internal', `${this.#label()} ended its transaction (${outcome.result.command}); fw runs every entry in a transaction of its own.`);
      }
      return outcome.result;
    }
    this.#lastFailed = true;
    const error = outcome.error;
    if ((error as { code?: string }).code === '42601' && /multiple commands/.test(error.message)) {
      throw new FwError(
        'internal',
        `${this.#label()} sent several SQL statements in one call. fw sends each statement on its own (so an injected "; …" cannot run): split them into separate calls.`,
        { cause: error },
      );
    }
    throw error;
  }

  // ---- ending ----

  /** ROLLBACK (of a read, or of anything aborted): deferred to the connection's next use, sent, or awaited. */
  #end(): Promise<void> {
    const connection = this.#connection;
    if (this.#settings.readEnd === 'defer') {
      connection.tail.push(ROLLBACK);
      return Promise.resolve();
    }
    const sent = connection.wire.send([ROLLBACK], { sync: true }).then((outcomes) => {
      if (outcomes.some((outcome) => !outcome.ok)) connection.broken = true;
    });
    return this.#settings.readEnd === 'await' ? sent : Promise.resolve();
  }

  #label(): string {
    return this.#options.label ?? 'A request transaction';
  }
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
