/**
 * The outbox table, `_fw_outbox`, as the rest of the runtime sees it: the one way rows enter it
 * (`enqueue`), a claimed row, and what delivering one came to. Every writer — a command's `ctx.emit`
 * and `ctx.startWorkflow`, the worker starting the workflows an event wakes, an external command's
 * effects — goes through `enqueue`, so a row always carries its caller and trace the same way.
 */
import { type Kysely, sql } from 'kysely';
import { isFwError } from '../core/errors.ts';
import { OUTBOX_TABLE } from './ddl.ts';

/** A row to add: an event and its payload, and for a row that must exist once, its idempotency key. */
export interface OutboxEntry {
  event: string;
  payload: unknown;
  /** Rows with a key are added once: a second row with the same key is skipped (`on conflict do nothing`). */
  idempotencyKey?: string;
  /** When the row falls due (default: at once). A scheduled call's or a cron tick's time. */
  availableAt?: Date;
}

/** Who caused the rows: the actions they wake run as this user and tenant. */
export interface OutboxCaller {
  tenantId: string | null;
  userId: string | null;
  traceId: string | null;
  /**
   * The caller's auth kind and role, written only by the owner (the worker, crons). A request's rows
   * take them from its verified identity (column defaults the outbox's policy checks).
   */
  kind?: string | null;
  role?: string | null;
}

/**
 * Adds rows to the outbox in `conn`'s transaction: a request transaction (as the caller, under the
 * outbox's row-level policy) or the owner's connection (the worker). Keyed rows already there are skipped.
 */
export async function enqueue(conn: Kysely<any>, caller: OutboxCaller, entries: readonly OutboxEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const rows = entries.map((entry) => ({
    event: entry.event,
    payload: sql`${JSON.stringify(entry.payload ?? null)}::jsonb`,
    tenant_id: caller.tenantId,
    user_id: caller.userId,
    trace_id: caller.traceId,
    ...(entry.idempotencyKey === undefined ? {} : { idempotency_key: entry.idempotencyKey }),
    ...(entry.availableAt === undefined ? {} : { available_at: sql`${entry.availableAt.toISOString()}::timestamptz` }),
    ...(caller.kind === undefined ? {} : { caller_kind: caller.kind }),
    ...(caller.role === undefined ? {} : { caller_role: caller.role }),
  }));
  const insert = conn.insertInto(OUTBOX_TABLE).values(rows);
  await (entries.some((entry) => entry.idempotencyKey !== undefined) ? insert.onConflict((oc) => oc.doNothing()) : insert).execute();
}

/** A claimed outbox row. */
export interface OutboxRow {
  id: string;
  event: string;
  payload: unknown;
  tenantId: string | null;
  userId: string | null;
  traceId: string | null;
  /** The caller's auth kind and role (scheduled calls run as them); null on rows the worker wrote. */
  callerKind: string | null;
  callerRole: string | null;
  /** The worker holding the row's lease (the claimer). */
  leaseOwner: string;
  /** Counting this claim: 1 on the first delivery attempt. */
  attempts: number;
  idempotencyKey: string;
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
