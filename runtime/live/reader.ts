/**
 * One process's reader of the live invalidation log. It starts from "now" (`initialCursor`), and on
 * every wakeup (notification, poll, listener reconnect, or `wake()`) reads what was committed since,
 * gap-safely (`readInvalidations`). A wakeup while idle reads at once; wakeups that arrive while a
 * read is in flight are folded into exactly one follow-up read. There is no debounce.
 *
 * @example
 *   const reader = createInvalidationReader(db, {
 *     onInvalidations: ({ rows, revision }) => rerunGroupsReading(rows),
 *   });
 *   await reader.start();
 *   // Label a query result with the revision read BEFORE running the query:
 *   const revision = reader.revision();
 */
import type { FwDatabase } from '../db/database.ts';
import { initialCursor, readInvalidations, type Invalidation, type LogCursor } from './log.ts';
import { noticeVerifier } from './notice.ts';
import { databaseSecret, LIVE_NOTICE_SECRET, LIVE_NOTICE_SECRET_BYTES } from '../db/secrets.ts';
import { createWakeups, type WakeReason, type WakeupOptions, type WakeupStatus } from './wakeups.ts';
import { printable } from '../core/printable.ts';
import { uncapturedTables } from '../db/live-capture.ts';
import { createSingleFlight } from '../core/single-flight.ts';

export interface InvalidationBatch {
  /** The rows read, in order of revision (may be empty only when `expired`). */
  rows: Invalidation[];
  /** The reader's revision after this batch. */
  revision: number;
  /**
   * The log was pruned past this reader's cursor (it could not read for longer than the retention
   * window), so rows may be missing: treat every table as changed.
   */
  expired: boolean;
}

export interface ReaderOptions extends WakeupOptions {
  /** Called after each read that brought rows (or found the log expired). Errors are logged, not thrown. */
  onInvalidations(batch: InvalidationBatch): void;
  /** Rows per read (default 1000); a full page is followed by another read at once. */
  pageSize?: number;
  /**
   * Called, before the read it triggers, with the log row a notification carried (notice.ts): signed
   * by the capture trigger, committed, above the cursor. Its transaction's writes are visible to any
   * snapshot taken from now on. The same row still comes through `onInvalidations` later. The work it
   * started, when returned, is what the read waits for (at most `noticeReadDelayMs`): that read only
   * confirms the notice, so it should not compete with the reruns for the database and the event loop.
   */
  onNotice?(row: Invalidation): Promise<unknown> | undefined;
  /** Longest wait, in ms, of a read triggered by a notice for the work the notice started (default 250). */
  noticeReadDelayMs?: number;
  /**
   * The app tables whose capture triggers the reader checks at start and on every poll and reconnect
   * (db/live-capture.ts `uncapturedTables`): while a table's writes may escape the log, and once more
   * when they no longer can, each check delivers a row saying "anything changed, every tenant" for it.
   */
  capturedTables?(): readonly string[];
}

export type ReaderStatus = {
  /** The cursor's revision. */
  revision: number;
  /** Transactions still running at the last read, whose rows may yet arrive. */
  pending: number;
  /** Reads started (a full page counts each page). */
  reads: number;
  /** Notifications that carried a signed log row above the cursor (handed to `onNotice`). */
  notices: number;
  /** Reads that waited for the work of a notice (`onNotice`) before starting. */
  readsAfterNotice: number;
  /** A read is due and waits for the work of a notice. */
  waitingForNotice: boolean;
  /** Notifications with a payload that is no signed log row (forged, or made with another key). */
  rejectedNotices: number;
  /** Tables whose capture triggers were missing or disabled at the last check (`capturedTables`). */
  uncapturedTables: readonly string[];
  /** Checks that found such tables (each reran the groups reading them). */
  uncapturedChecks: number;
  failedReads: number;
  /** A read is in flight. */
  reading: boolean;
  /** True while reads fail (the database is unreachable); reset by the next successful read. */
  failing: boolean;
  lastError: string | null;
  wakeups: WakeupStatus;
};

export interface InvalidationReader {
  /** Takes the initial cursor, starts the wakeups and reads once (to cover the start-up window). */
  start(): Promise<void>;
  /** The highest revision read so far. */
  revision(): number;
  /** Asks for a read (at once when idle, else folded into one follow-up read). */
  wake(): void;
  status(): ReaderStatus;
  /** Stops the wakeups and waits for the read in flight. */
  close(): Promise<void>;
}

export function createInvalidationReader(db: FwDatabase, options: ReaderOptions): InvalidationReader {
  const pageSize = options.pageSize ?? 1000;
  let cursor: LogCursor | undefined;
  let closed = false;
  let reads = 0;
  let failedReads = 0;
  let failing = false;
  let lastError: string | null = null;
  let verify: ((payload: string) => Invalidation | undefined) | undefined;
  let notices = 0;
  let rejectedNotices = 0;
  let readsAfterNotice = 0;
  const noticeReadDelayMs = options.noticeReadDelayMs ?? 250;
  /** The read a notice deferred, while it waits (`readAfter`). */
  let deferred: ReturnType<typeof setTimeout> | undefined;
  /** The capture triggers are due for a check before the next read (at start, after a poll or a reconnect). */
  let captureCheckDue = true;
  /** Tables found not captured at the last check. */
  let uncaptured: readonly string[] = [];
  let uncapturedChecks = 0;

  const wakeups = createWakeups(db, {
    ...options,
    onWake: (reason: WakeReason, payload?: string) => {
      if (reason !== 'notify') captureCheckDue = true;
      const started = payload && verify ? notice(payload) : undefined;
      if (started) readAfter(started);
      else wake();
    },
  });

  /** Hands a verified row to `onNotice`; what it started, if anything. */
  function notice(payload: string): Promise<unknown> | undefined {
    const row = verify?.(payload);
    if (!row) {
      rejectedNotices++;
      return undefined;
    }
    // At or below the cursor it may have been read already (or be a late row still to come): the read decides.
    if (!cursor || row.revision <= cursor.revision) return undefined;
    notices++;
    try {
      return options.onNotice?.(row);
    } catch (error) {
      console.error(`fw live: handling a notice failed: ${printable((error as Error).message)}`);
      return undefined;
    }
  }

  /**
   * Reads once `started` settles, or after `noticeReadDelayMs`: the notice already set its reruns off,
   * and its read only confirms it (the row is matched again; groups that ran since skip it). A read
   * already deferred covers this notice's row too; any other wakeup reads at once (`wake`).
   */
  function readAfter(started: Promise<unknown>): void {
    if (deferred) return;
    const read = () => {
      if (deferred !== timer) return;
      readsAfterNotice++;
      wake();
    };
    const timer = (deferred = setTimeout(read, noticeReadDelayMs));
    started.then(read, read);
  }

  /**
   * Rows for the tables whose writes may have escaped the log since the last check: those not captured
   * now and those not captured then (a write made before they were re-enabled). They say "anything, every
   * tenant", carry no revision a notice could have covered (-1), and are checked before the log is read,
   * so every write they stand for committed before the reruns they cause begin.
   */
  async function uncapturedRows(): Promise<Invalidation[]> {
    if (!options.capturedTables || !captureCheckDue) return [];
    captureCheckDue = false;
    const now = await uncapturedTables(db.admin, options.capturedTables());
    const tables = new Set([...uncaptured, ...now]);
    if (now.length > 0 && uncaptured.length === 0) {
      console.error(`fw live: the capture triggers of ${now.join(', ')} are missing or disabled; their live queries rerun on every poll until \`fw db migrate\` (or a restart) enables them again.`);
    }
    uncaptured = now;
    if (tables.size > 0) uncapturedChecks++;
    return [...tables].map((table) => ({ revision: -1, table, tenantId: null, changes: null }));
  }

  /** Reads until the log is drained; one failed read ends the pass (the next wakeup retries). */
  const readPass = async (): Promise<void> => {
    let escaped: Invalidation[] = [];
    try {
      escaped = await uncapturedRows();
    } catch (error) {
      captureCheckDue = true;
      console.error(`fw live: checking the capture triggers failed (retrying on the next wakeup): ${printable((error as Error).message)}`);
    }
    if (escaped.length > 0) {
      try {
        options.onInvalidations({ rows: escaped, revision: cursor?.revision ?? 0, expired: false });
      } catch (error) {
        console.error(`fw live: handling invalidations failed: ${printable((error as Error).message)}`);
      }
    }
    for (;;) {
      if (closed || !cursor) return;
      let result: Awaited<ReturnType<typeof readInvalidations>>;
      reads++;
      try {
        result = await readInvalidations(db.admin, cursor, pageSize);
      } catch (error) {
        failedReads++;
        lastError = (error as Error).message;
        if (!failing) {
          failing = true;
          console.error(`fw live: reading the invalidation log failed (retrying on the next wakeup): ${printable(String(lastError))}`);
        }
        return;
      }
      if (failing) console.error('fw live: reading the invalidation log works again.');
      failing = false;
      lastError = null;
      cursor = result.cursor;
      if (result.rows.length > 0 || result.expired) {
        try {
          options.onInvalidations({ rows: result.rows, revision: result.cursor.revision, expired: result.expired });
        } catch (error) {
          console.error(`fw live: handling invalidations failed: ${printable((error as Error).message)}`);
        }
      }
      if (!result.more) return;
    }
  };

  /** One pass at a time; wakeups during a pass fold into one follow-up pass (single-flight.ts). */
  const passes = createSingleFlight(readPass);

  function wake(): void {
    if (deferred) {
      clearTimeout(deferred);
      deferred = undefined;
    }
    if (closed || !cursor) return;
    void passes.wake();
  }

  return {
    async start() {
      if (cursor) return;
      if (options.onNotice) {
        verify = noticeVerifier(await databaseSecret(db.admin, LIVE_NOTICE_SECRET, LIVE_NOTICE_SECRET_BYTES));
      }
      cursor = await initialCursor(db.admin);
      await wakeups.start();
      wake();
    },
    revision: () => cursor?.revision ?? 0,
    wake,
    status: () => ({
      revision: cursor?.revision ?? 0,
      pending: cursor?.pending.length ?? 0,
      reads,
      notices,
      readsAfterNotice,
      waitingForNotice: deferred !== undefined,
      rejectedNotices,
      uncapturedTables: uncaptured,
      uncapturedChecks,
      failedReads,
      reading: passes.busy,
      failing,
      lastError,
      wakeups: wakeups.status(),
    }),
    async close() {
      closed = true;
      if (deferred) clearTimeout(deferred);
      deferred = undefined;
      await wakeups.close();
      await passes.close();
    },
  };
}
