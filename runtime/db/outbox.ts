/**
 * The outbox table, `_fw_outbox`, as the rest of the runtime sees it: the two ways rows enter it, a
 * claimed row, and what delivering one came to. A row is an order the worker carries out as the identity
 * it names (run an action, a workflow run, a scheduled call), so only fw's code writes one:
 *
 * - in a request transaction (a command's `ctx.emit`, `ctx.startWorkflow`, `ctx.signal`,
 *   `ctx.scheduler`; an external command's effects), {@link enqueueInTransaction} — through
 *   `_fw.enqueue` with fw's proof for that transaction, as the verified caller (db/ddl.ts);
 * - as the owner (the worker starting the workflows an event wakes, the crons' ticks),
 *   {@link enqueueAsOwner}, naming the identity itself.
 *
 * The request roles have no privilege on the table: handler SQL cannot add, change or read a row.
 */
import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Auth } from '../core/entry-types.ts';
import { isFwError } from '../core/errors.ts';
import { OUTBOX_TABLE } from './ddl.ts';
import { proofOf } from './proof-request.ts';

/** A row to add: an event and its payload, and for a row that must exist once, its idempotency key. */
export interface OutboxEntry {
  event: string;
  payload: unknown;
  /** Rows with a key are added once: a second row with the same key is skipped (`on conflict do nothing`). */
  idempotencyKey?: string;
  /** When the row falls due (default: at once). A scheduled call's or a cron tick's time. */
  availableAt?: Date;
}

/** Who caused rows the owner writes: the work they order runs as this caller. */
export interface OutboxCaller {
  tenantId: string | null;
  userId: string | null;
  traceId: string | null;
  /** The caller's auth kind and role (null: the system, as for a cron's tick). */
  kind?: string | null;
  role?: string | null;
}

/**
 * Adds rows in a request transaction (`trx`), as its verified caller: `_fw.enqueue` takes tenant, user,
 * auth kind and role from the transaction's claim and refuses the call without fw's proof for it. Every
 * row gets a key (a fresh one when it has none), and the proof covers the rows' text, so a proof fits
 * these rows in this transaction only. Keyed rows already there are skipped.
 */
export async function enqueueInTransaction(trx: Kysely<any>, traceId: string | null, entries: readonly OutboxEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const rows = JSON.stringify(
    entries.map((entry) => ({
      event: entry.event,
      payload: entry.payload ?? null,
      key: entry.idempotencyKey ?? randomUUID(),
      trace_id: traceId,
      available_at: entry.availableAt?.toISOString() ?? null,
    })),
  );
  await sql`select "_fw"."enqueue"(${rows}, ${proofOf('enqueue', rows)})`.execute(trx);
}

/** Adds rows as the owner (`db.admin`: the worker, crons) for `caller`. Keyed rows already there are skipped. */
export function enqueueAsOwner(admin: Kysely<any>, caller: OutboxCaller, entries: readonly OutboxEntry[]): Promise<void> {
  return enqueueForCallers(admin, entries.map((entry) => ({ caller, entry })));
}

/** As {@link enqueueAsOwner}, each row for a caller of its own (a cron's call in each tenant), in one statement. */
export async function enqueueForCallers(admin: Kysely<any>, rows: ReadonlyArray<{ caller: OutboxCaller; entry: OutboxEntry }>): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map(({ caller, entry }) => ({
    event: entry.event,
    payload: sql`${JSON.stringify(entry.payload ?? null)}::jsonb`,
    tenant_id: caller.tenantId,
    user_id: caller.userId,
    trace_id: caller.traceId,
    caller_kind: caller.kind ?? null,
    caller_role: caller.role ?? null,
    ...(entry.idempotencyKey === undefined ? {} : { idempotency_key: entry.idempotencyKey }),
    ...(entry.availableAt === undefined ? {} : { available_at: sql`${entry.availableAt.toISOString()}::timestamptz` }),
  }));
  const insert = admin.insertInto(OUTBOX_TABLE).values(values);
  await (rows.some(({ entry }) => entry.idempotencyKey !== undefined) ? insert.onConflict((oc) => oc.doNothing()) : insert).execute();
}

/** A claimed outbox row. */
export interface OutboxRow {
  id: string;
  event: string;
  payload: unknown;
  tenantId: string | null;
  userId: string | null;
  traceId: string | null;
  /** The caller's auth kind and role: the work runs as them (null kind: the system, as a cron's tick). */
  callerKind: string | null;
  callerRole: string | null;
  /** The worker holding the row's lease (the claimer). */
  leaseOwner: string;
  /** Counting this claim: 1 on the first delivery attempt. */
  attempts: number;
  idempotencyKey: string;
}

/**
 * Who a row's work runs as: the caller who caused it — its tenant, user, auth kind and role, as fw wrote
 * them from the verified identity — or, for an entry that declares `runAs: 'system'`, the system in that
 * tenant (the user kept, for the record). A row without a kind is the system's own (a cron's tick).
 */
export function rowAuth(row: OutboxRow, runAs?: unknown): Auth {
  const kind = row.callerKind === 'user' || row.callerKind === 'anonymous' ? row.callerKind : 'system';
  if (runAs === 'system' || kind === 'system') return { kind: 'system', tenantId: row.tenantId, userId: row.userId, role: null };
  return { kind, tenantId: row.tenantId, userId: row.userId, role: row.callerRole };
}

/** What delivering one row came to; `permanent` failures are not worth retrying. */
export type DeliveryResult =
  | {
      ok: true;
      note?: string;
      /** The row is not done: it sleeps until then (epoch ms) — a workflow run waiting — without counting an attempt. */
      resumeAt?: number;
      /** The delivery marked its row delivered itself, in its own transaction (a scheduled command). */
      settled?: boolean;
    }
  | { ok: false; permanent: boolean; message: string; action: string; error: unknown };

/** The longest `last_error` kept: a message, never a stack. */
export const MAX_ERROR_LENGTH = 1000;

/**
 * A failed delivery of `name` (an action, a workflow), with the message kept in `last_error`:
 * `name (code): message` for fw's codes, `name: message` for what the app threw as it was.
 */
export function failedDelivery(name: string, error: unknown, permanent: boolean): DeliveryResult {
  const shown = thrownAsIs(error) ? (error as { cause: unknown }).cause : error;
  const message = shown instanceof Error ? shown.message : String(shown);
  const code = isFwError(shown) ? ` (${shown.code})` : '';
  return { ok: false, permanent, action: name, error, message: `${name}${code}: ${message.trim()}`.slice(0, MAX_ERROR_LENGTH) };
}

/**
 * An FwError that only wraps what the app threw: an `internal` with nothing fw added but the name of
 * the entry that failed (entry/failure-place.ts: `action flaky: …`), which `last_error` already leads with.
 */
function thrownAsIs(error: unknown): boolean {
  if (!isFwError(error) || error.code !== 'internal' || !(error.cause instanceof Error) || isFwError(error.cause)) return false;
  return error.message === error.cause.message || error.message.endsWith(`: ${error.cause.message}`);
}
