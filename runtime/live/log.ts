/**
 * The live invalidation log: `_fw_live_invalidations`, written by statement-level triggers on every app
 * table (one row per transaction x table x tenant), read gap-safely by each process's reader, checked
 * by resuming clients and pruned by age. See docs/live.md ("How a write reaches a subscriber").
 *
 * Revisions are JavaScript numbers (the sequence would need 2^53 writes to outgrow them).
 *
 * @example
 *   let cursor = await initialCursor(db.admin);
 *   // … on every wakeup:
 *   const read = await readInvalidations(db.admin, cursor);
 *   cursor = read.cursor;
 *   for (const row of read.rows) console.log(row.revision, row.table, row.tenantId);
 */
import { sql, type Kysely } from 'kysely';
import type { ChangedValues } from './read-set.ts';
import { LIVE_LOG_TABLE, LIVE_REVISION_SEQUENCE, LIVE_STATE_TABLE } from '../db/ddl.ts';

const log = sql.raw(`"public"."${LIVE_LOG_TABLE}"`);
const state = sql.raw(`"public"."${LIVE_STATE_TABLE}"`);
const sequence = sql.raw(`"public"."${LIVE_REVISION_SEQUENCE}"`);

/** One row of the log, as the reader sees it: a write to `table` for `tenantId` (null = every tenant). */
export interface Invalidation {
  revision: number;
  table: string;
  tenantId: string | null;
  /** When the write logged it (ms since the epoch, the database's clock): the start of the live lag. */
  writtenAtMs?: number;
  /** What changed, per captured column (old and new images); null or absent: anything may have. */
  changes?: ChangedValues;
}

/**
 * Where a reader stands: the highest revision it has read, and what of its last read's snapshot says
 * which transactions may yet commit rows below `revision`: those still running and listed (`pending`,
 * xid8 as decimal strings), and every transaction at or above the snapshot's `xmax`, which PostgreSQL
 * does not list (xmax is one past the newest *completed* transaction, not the next id to hand out, so a
 * transaction that started earlier can be above it while running).
 */
export interface LogCursor {
  readonly revision: number;
  readonly pending: readonly string[];
  /** `pg_snapshot_xmax` of the last read (xid8, decimal). Cursors from `initialCursor` and `readInvalidations` always carry it. */
  readonly xmax?: string;
}

export interface ReadResult {
  /** New rows, in order of revision. */
  rows: Invalidation[];
  cursor: LogCursor;
  /**
   * The log was pruned past the cursor it was given (the reader was stalled for longer than the
   * retention window): rows may be missing, so treat every table as changed.
   */
  expired: boolean;
  /** The page was full: read again at once for the rest. */
  more: boolean;
}

export type ResumeCheck =
  | { kind: 'up-to-date' }
  | { kind: 'changed' }
  | {
      kind: 'reset';
      reason: 'revision_expired' | 'revision_unknown';
      /** The lowest revision that can still be resumed from exactly (the log's `pruned_through`). */
      oldestRevision: number;
    };

export interface ListedInvalidation extends Invalidation {
  /** The writing transaction (xid8, decimal). */
  xid: string;
  traceId: string | null;
  /** ISO 8601. */
  createdAt: string;
}

export interface LogBounds {
  /** The highest committed revision (0 for an empty log). */
  latestRevision: number;
  /** The lowest revision still in the log, or null when it is empty. */
  oldestRetainedRevision: number | null;
  /** Resumes from below this revision are reset (see `pruneInvalidations`). */
  prunedThrough: number;
}

// ---- reading ----

/**
 * A cursor that starts "now": the highest committed revision and the transactions running at this
 * moment (their rows will still be read when they commit). Nothing older is replayed.
 */
export async function initialCursor(admin: Kysely<any>): Promise<LogCursor> {
  const result = await sql<{ revision: string; pending: unknown; xmax: string }>`
    select greatest((select coalesce(max(revision), 0) from ${log}), (select coalesce(max(pruned_through), 0) from ${state}))::text as revision,
      (select coalesce(json_agg(x::text), '[]'::json) from pg_snapshot_xip(snap.s) as x) as pending,
      pg_snapshot_xmax(snap.s)::text as xmax
    from (select pg_current_snapshot() as s) as snap`.execute(admin);
  const row = result.rows[0]!;
  return { revision: toRevision(row.revision), pending: jsonArray<string>(row.pending), xmax: row.xmax };
}

/**
 * Reads what was committed since `cursor`, gap-safely, and the cursor to continue from.
 *
 * Revisions come from a sequence, which does not follow commit order, so "revision > cursor" alone
 * would skip a slow transaction's row. The read therefore takes, in ONE statement (one snapshot S for
 * the rows and for the returned pending set and xmax):
 *   - the rows with `revision > cursor.revision` (at most `limit` of them, lowest first), and
 *   - every row with `revision <= cursor.revision` of a transaction in `cursor.pending` or at or above
 *     `cursor.xmax`;
 * the next cursor is `{ revision: max(cursor.revision, highest revision read), pending: xip(S), xmax: xmax(S) }`.
 *
 * Why no committed row is ever skipped. Take a row w (revision r, transaction x) and the first read
 * whose snapshot S sees x committed; say its cursor came from the previous read, with snapshot S'
 * (or from `initialCursor`'s snapshot). S' did not see x committed, and x did not abort, so at S' x
 * was in progress or not started: x is in xip(S') or x >= xmax(S') (PostgreSQL lists in xip only the
 * running transactions below xmax, and xmax is one past the newest *completed* transaction — a
 * transaction that got its id earlier than that one but is still running is above it, unlisted). Both
 * are read by the second rule when r <= cursor.revision, and by the first when r is above. No row is
 * read twice: a row read by the second rule was invisible at S' (its transaction was running or
 * unstarted there), hence at every earlier read too.
 *
 * (Until this was found — a burst of concurrent commands where a transaction with a higher xid drew a
 * lower revision than one that committed first — the second rule took `pending` only.)
 *
 * Paging: only the first rule is limited. When the page is full (`more`), the cursor's revision is the
 * last row read: rows above it are still found by the first rule, rows at or below it were read
 * (they are visible to S and ordered before it) unless their transaction is in xip(S).
 */
export async function readInvalidations(admin: Kysely<any>, cursor: LogCursor, limit = 1000): Promise<ReadResult> {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new TypeError(`fw: readInvalidations limit must be a positive integer, got ${limit}.`);
  const from = checkedRevision(cursor.revision);
  const pending = xidArray(cursor.pending);
  // A cursor without xmax (made by hand) cannot say which unlisted transactions were running: none counts.
  const xmax = cursor.xmax === undefined ? MAX_XID8 : xidArray([cursor.xmax]).slice(1, -1);
  const result = await sql<{ rows: unknown; fresh: string | number; pending: unknown; xmax: string; pruned_through: string }>`
    with late as (
      select revision, table_name, tenant_id, created_at, changes from ${log}
      where revision <= ${from}::bigint and (xid = any(${pending}::xid8[]) or xid >= ${xmax}::xid8)
    ), fresh as (
      select revision, table_name, tenant_id, created_at, changes from ${log}
      where revision > ${from}::bigint order by revision limit ${limit}
    ), picked as (
      select * from late union all select * from fresh
    )
    select
      (select coalesce(json_agg(json_build_array(revision::text, table_name, tenant_id, (extract(epoch from created_at) * 1000)::bigint::text, changes) order by revision), '[]'::json) from picked) as rows,
      (select count(*) from fresh) as fresh,
      (select coalesce(json_agg(x::text), '[]'::json) from pg_snapshot_xip(snap.s) as x) as pending,
      pg_snapshot_xmax(snap.s)::text as xmax,
      (select coalesce(max(pruned_through), 0)::text from ${state}) as pruned_through
    from (select pg_current_snapshot() as s) as snap`.execute(admin);
  const row = result.rows[0]!;
  const rows = jsonArray<[string, string, string | null, string, ChangedValues]>(row.rows).map(([revision, table, tenantId, writtenAt, changes]) => ({
    revision: toRevision(revision),
    table,
    tenantId,
    writtenAtMs: Number(writtenAt),
    changes: changes ?? null,
  }));
  let revision = from;
  for (const invalidation of rows) if (invalidation.revision > revision) revision = invalidation.revision;
  return {
    rows,
    cursor: { revision, pending: jsonArray<string>(row.pending), xmax: row.xmax },
    expired: from < toRevision(row.pruned_through),
    more: Number(row.fresh) >= limit,
  };
}

/**
 * Decides a resume: has anything the client's snapshot depends on changed since `lastRevision`?
 * The snapshot is assumed taken after the revision `lastRevision` committed (label a result with the
 * reader's revision read BEFORE running the query).
 *
 * - `reset` / `revision_expired`: `lastRevision` is below `pruned_through`; rows it would need are gone.
 * - `reset` / `revision_unknown`: `lastRevision` is above anything this database's sequence handed out
 *   (e.g. the database was recreated), or not a whole number ≥ 0.
 * - `changed`: a relevant row (table in `tables`, tenant null or `tenantId`, and `relevant` to the
 *   subscription's read set) has a higher revision, or
 *   has a revision ≤ `lastRevision` but belongs to a transaction that may still have been running
 *   when the snapshot was taken: its xid is ≥ the `horizon` (oldest running transaction) recorded
 *   with the newest row at or below `lastRevision`. Such a transaction was running when that row drew
 *   its revision (it drew a lower one earlier and committed after the snapshot, which came later), so
 *   its xid cannot be below that horizon. With no such row the check is conservative: any relevant
 *   row at or below `lastRevision` counts. Rows of the transaction that wrote revision `lastRevision`
 *   itself never count: it committed before the snapshot was taken.
 * - `up-to-date` otherwise. A false `changed` only costs a snapshot (it happens while some other write
 *   transaction of the cluster runs long); a false `up-to-date` cannot happen.
 *
 * @example
 *   const check = await checkResume(db.admin, { lastRevision: 42, tables: ['notes'], tenantId });
 */
export async function checkResume(
  admin: Kysely<any>,
  options: {
    lastRevision: number;
    tables: readonly string[];
    tenantId: string | null;
    /**
     * Whether one of the candidate rows concerns the subscription (its read set); without it every
     * row of the tables counts. More candidates than `RESUME_ROWS` count as a change.
     */
    relevant?: (row: Invalidation) => boolean;
  },
): Promise<ResumeCheck> {
  const { lastRevision, tenantId } = options;
  const tables = [...options.tables];
  const last = Number.isSafeInteger(lastRevision) && lastRevision >= 0 ? lastRevision : 0;
  const result = await sql<{ pruned_through: string; last_value: string; candidates: unknown }>`
    with anchor as (
      select revision, xid, horizon from ${log} where revision <= ${last}::bigint order by revision desc limit 1
    ), candidates as (
      select r.revision, r.table_name, r.tenant_id, r.changes from ${log} r
      where r.table_name = any(${tables}::text[]) and (r.tenant_id is null or r.tenant_id = ${tenantId}::uuid)
        and (r.revision > ${last}::bigint or r.xid >= coalesce((select horizon from anchor), '0'::xid8))
        and not exists (select 1 from anchor a where a.revision = ${last}::bigint and a.xid = r.xid)
      limit ${RESUME_ROWS + 1}
    )
    select
      (select coalesce(max(pruned_through), 0)::text from ${state}) as pruned_through,
      (select (case when is_called then last_value else 0 end)::text from ${sequence}) as last_value,
      (select coalesce(json_agg(json_build_array(revision::text, table_name, tenant_id, changes)), '[]'::json) from candidates) as candidates`.execute(admin);
  const row = result.rows[0]!;
  const prunedThrough = toRevision(row.pruned_through);
  if (!Number.isSafeInteger(lastRevision) || lastRevision < 0 || lastRevision > toRevision(row.last_value)) {
    return { kind: 'reset', reason: 'revision_unknown', oldestRevision: prunedThrough };
  }
  if (lastRevision < prunedThrough) return { kind: 'reset', reason: 'revision_expired', oldestRevision: prunedThrough };
  const candidates = jsonArray<[string, string, string | null, ChangedValues]>(row.candidates).map(([revision, table, tenant, changes]) => ({
    revision: toRevision(revision),
    table,
    tenantId: tenant,
    changes: changes ?? null,
  }));
  const relevant = options.relevant ?? (() => true);
  const changed = candidates.length > RESUME_ROWS || candidates.some((candidate) => relevant(candidate));
  return changed ? { kind: 'changed' } : { kind: 'up-to-date' };
}

/** Log rows a resume check matches against a read set one by one; more say "changed" at once. */
export const RESUME_ROWS = 1000;

// ---- operations ----

/**
 * The log, newest first, for `fw live invalidations list`. `tenantId` selects the rows that reach that
 * tenant (its own and the ones for every tenant); `tenantId: null` only the ones for every tenant.
 */
export async function listInvalidations(
  admin: Kysely<any>,
  options: { table?: string; tenantId?: string | null; limit?: number; beforeRevision?: number } = {},
): Promise<ListedInvalidation[]> {
  const limit = options.limit ?? 100;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new TypeError(`fw: listInvalidations limit must be a positive integer, got ${limit}.`);
  const conditions = [sql`true`];
  if (options.table !== undefined) conditions.push(sql`table_name = ${options.table}`);
  if (options.tenantId === null) conditions.push(sql`tenant_id is null`);
  else if (options.tenantId !== undefined) conditions.push(sql`(tenant_id is null or tenant_id = ${options.tenantId}::uuid)`);
  if (options.beforeRevision !== undefined) conditions.push(sql`revision < ${checkedRevision(options.beforeRevision)}::bigint`);
  // Ordered by the column, qualified: a bare `revision` would be the text output column, and "9" > "10".
  const result = await sql<{ revision: string; xid: string; table_name: string; tenant_id: string | null; trace_id: string | null; created_at: Date | string }>`
    select revision::text as revision, xid::text as xid, table_name, tenant_id, trace_id, created_at from ${log}
    where ${sql.join(conditions, sql` and `)}
    order by ${log}.revision desc limit ${limit}`.execute(admin);
  return result.rows.map((row) => ({
    revision: toRevision(row.revision),
    xid: row.xid,
    table: row.table_name,
    tenantId: row.tenant_id,
    traceId: row.trace_id,
    createdAt: new Date(row.created_at).toISOString(),
  }));
}

/**
 * Deletes rows older than `olderThanMs`, safely for readers and resuming clients, and raises
 * `pruned_through`. Safe to run from several processes at once: a run that finds another one in
 * progress returns at once (`deleted: 0`).
 *
 * Which rows go: let Y be the newest row created before the cutoff. Rows of transactions with
 * `xid < Y.horizon` finished before Y's snapshot, which was taken before Y was created (`created_at`
 * is `clock_timestamp()`), so more than the window ago; all their revisions are below Y's. Those rows
 * are deleted and `pruned_through` rises to Y's revision (also when nothing could be deleted: Y is
 * older than the window, and resumes from older revisions are reset by definition). A reader or client
 * at or above Y has seen the deleted rows already (it read past Y, which committed after they did);
 * one below Y is told (`expired` / `revision_expired`). Rows of transactions that may have been running
 * when Y was written stay until a later run, and so does Y itself until newer rows age.
 */
export async function pruneInvalidations(admin: Kysely<any>, options: { olderThanMs: number }): Promise<{ deleted: number; prunedThrough: number }> {
  const { olderThanMs } = options;
  if (!Number.isFinite(olderThanMs) || olderThanMs < 0) throw new TypeError(`fw: pruneInvalidations olderThanMs must be ≥ 0, got ${olderThanMs}.`);
  return admin.transaction().execute(async (trx) => {
    const locked = await sql<{ pruned_through: string }>`select pruned_through::text as pruned_through from ${state} for update skip locked`.execute(trx);
    if (locked.rows.length === 0) {
      const current = await sql<{ pruned_through: string }>`select coalesce(max(pruned_through), 0)::text as pruned_through from ${state}`.execute(trx);
      return { deleted: 0, prunedThrough: toRevision(current.rows[0]!.pruned_through) };
    }
    const prunedThrough = toRevision(locked.rows[0]!.pruned_through);
    const cutoff = sql`now() - ${olderThanMs} * interval '1 millisecond'`;
    const newest = await sql<{ revision: string; horizon: string }>`
      select revision::text as revision, horizon::text as horizon from ${log}
      where revision = (select max(revision) from ${log} where created_at < ${cutoff})`.execute(trx);
    const y = newest.rows[0];
    if (!y) return { deleted: 0, prunedThrough };
    const deleted = await sql<{ n: string }>`
      with gone as (delete from ${log} where created_at < ${cutoff} and xid < ${y.horizon}::xid8 returning 1)
      select count(*)::text as n from gone`.execute(trx);
    const count = Number(deleted.rows[0]!.n);
    const raised = await sql<{ pruned_through: string }>`
      update ${state} set pruned_through = greatest(pruned_through, ${y.revision}::bigint) returning pruned_through::text as pruned_through`.execute(trx);
    return { deleted: count, prunedThrough: toRevision(raised.rows[0]!.pruned_through) };
  });
}

/** The log's extent, for status output. */
export async function logBounds(admin: Kysely<any>): Promise<LogBounds> {
  const result = await sql<{ latest: string; oldest: string | null; pruned_through: string }>`
    select (select coalesce(max(revision), 0)::text from ${log}) as latest,
      (select min(revision)::text from ${log}) as oldest,
      (select coalesce(max(pruned_through), 0)::text from ${state}) as pruned_through`.execute(admin);
  const row = result.rows[0]!;
  return {
    latestRevision: toRevision(row.latest),
    oldestRetainedRevision: row.oldest === null ? null : toRevision(row.oldest),
    prunedThrough: toRevision(row.pruned_through),
  };
}

// ---- helpers ----

/** A revision from the database (int8 arrives as a string). */
function toRevision(value: string | number | bigint): number {
  const revision = Number(value);
  if (!Number.isSafeInteger(revision)) throw new RangeError(`fw: live log revision ${String(value)} is out of range.`);
  return revision;
}

function checkedRevision(revision: number): number {
  if (!Number.isSafeInteger(revision) || revision < 0) throw new TypeError(`fw: a live log revision must be a whole number ≥ 0, got ${revision}.`);
  return revision;
}

/** The largest xid8: `xid >= MAX_XID8` holds for no transaction. */
const MAX_XID8 = '18446744073709551615';

/** xid8 values as a PostgreSQL array literal (validated: decimal digits only). */
function xidArray(xids: readonly string[]): string {
  for (const xid of xids) {
    if (!/^\d{1,20}$/.test(xid)) throw new TypeError(`fw: a pending transaction id must be a decimal xid8, got ${JSON.stringify(xid)}.`);
  }
  return `{${xids.join(',')}}`;
}

function jsonArray<T>(value: unknown): T[] {
  const parsed = typeof value === 'string' ? JSON.parse(value) : value;
  return Array.isArray(parsed) ? (parsed as T[]) : [];
}
