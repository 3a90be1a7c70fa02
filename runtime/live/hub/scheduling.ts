/**
 * Which groups rerun, and when: the invalidations the log reader brings (and the notices that come
 * before them, notice.ts) wake the groups whose read sets they concern; each group runs one at a time,
 * and wakeups during a run fold into one follow-up run (its single flight). A run installs a read set
 * that depends on what it read, so the writes delivered while it was in flight are matched against that
 * read set again (the run/install race, `missedDuringRun`).
 */
import type { Invalidation } from '../log.ts';
import { tenantKey } from '../read-index.ts';
import { readSetMatches, type ReadSet } from '../read-set.ts';
import type { LiveConnection } from '../live-connection.ts';
import type { HubContext } from './context.ts';
import { MAX_COVERS, refreshOf, type Group, type Groups } from './groups.ts';

export interface Scheduler {
  /** Reruns the groups a notice concerns; their runs are what the reader's confirming read waits for. */
  onNotice(row: Invalidation): Promise<unknown> | undefined;
  /** Reruns the groups a batch of log rows concerns (every group when the log expired past the reader). */
  onInvalidations(rows: readonly Invalidation[], expired: boolean): void;
  /** Runs the group now, or once more after the run in flight; resolves when its runs are over. */
  schedule(group: Group): Promise<void>;
  /** One run of a group, as its single flight calls it: `rerun` runs it (with its identity's batch). */
  runOnce(group: Group): Promise<void>;
  /** The revision to label a run that starts now with: every write up to it is visible to its snapshot. */
  committedRevision(): number;
  /** Whether a log row concerns a group with this read set (its tenant, then its accesses). */
  concerns(group: Group, readSet: ReadSet, row: Invalidation): boolean;
  /**
   * The run/install race: did a batch delivered since the run began concern the read set it installs?
   * Those batches were matched against the previous read set only.
   */
  missedDuringRun(group: Group, readSet: ReadSet): boolean;
}

export interface SchedulerOptions {
  groups: Groups;
  /** The log reader's revision (reader.ts). */
  readerRevision(): number;
  /** Runs the group's query once (batched-reruns.ts). */
  rerun(group: Group): Promise<void>;
}

export function createScheduler(context: HubContext, { groups, readerRevision, rerun }: SchedulerOptions): Scheduler {
  const { counters } = context;
  /**
   * The invalidation batches delivered while some group's run was in flight, numbered: a run installs a
   * read set that depends on what it read, so the writes that arrived during the run are matched against
   * it again (a write only the new read set covers would otherwise be missed). Kept back to the oldest
   * run in flight; `historyFloor` is the newest batch dropped.
   */
  const history: Array<{ seq: number; rows: readonly Invalidation[]; expired: boolean; noticedAt: ReadonlyArray<number | undefined> }> = [];
  let batchSeq = 0;
  let historyFloor = 0;
  const inFlight = new Set<Group>();
  /**
   * Early runs. A notice (a signed log row in a notification, notice.ts) means its transaction is
   * committed and visible to every later snapshot, so the groups it concerns run at once instead of
   * after the read of the log. `noticed` maps the revisions noticed but not read yet to the notice's
   * number; when the reader brings that row, a group whose run began after the notice (its
   * `startedAtNotice` is at least that number) has seen it and is not run again. The log stays the
   * truth: every row is matched when read, noticed or not, and a forgotten notice only costs a run.
   */
  let noticeSeq = 0;
  const noticed = new Map<number, number>();
  /** The highest revision noticed: committed before any run that starts now (a label for its result). */
  let noticedRevision = 0;

  function onNotice(row: Invalidation): Promise<unknown> | undefined {
    noticeSeq++;
    if (noticed.size >= MAX_NOTICED) noticed.clear(); // the reader is far behind: rows then simply rerun
    noticed.set(row.revision, noticeSeq);
    noticedRevision = Math.max(noticedRevision, row.revision);
    const woken: Group[] = [];
    for (const group of groups.concerned(row)) {
      counters.noticeWakeups++;
      wokenBy(group, row);
      woken.push(group);
    }
    return woken.length === 0 ? undefined : Promise.allSettled(wakeTogether(woken));
  }

  function onInvalidations(rows: readonly Invalidation[], expired: boolean): void {
    batchSeq++;
    const noticedAt = rows.map((row) => noticed.get(row.revision));
    for (const row of rows) noticed.delete(row.revision);
    if (inFlight.size > 0) {
      history.push({ seq: batchSeq, rows, expired, noticedAt });
      if (history.length > MAX_HISTORY) historyFloor = history.splice(0, history.length - MAX_HISTORY).at(-1)!.seq;
    }
    // The log was pruned past this process's reader (it could not read for longer than the retention
    // window): rows it never saw may have concerned any group, so every group re-runs.
    if (expired) {
      noticed.clear();
      for (const group of [...groups.byKey.values()]) void schedule(group);
      return;
    }
    const affected = new Set<Group>();
    rows.forEach((row, i) => {
      // A write to a non-tenant table (tenant null) concerns every tenant; otherwise only its own.
      for (const group of groups.concerned(row)) {
        if (seenSinceNotice(group, noticedAt[i])) {
          counters.coveredByNotice++;
          continue;
        }
        affected.add(group);
        wokenBy(group, row);
      }
    });
    if (affected.size > 0) wakeTogether([...affected]);
  }

  /**
   * Wakes groups one write concerns; returns when each one's runs are over. A stream holding several of
   * their subscriptions (a paginated list's pages) is held until the run of each that covers this
   * wakeup has ended, so their frames reach it together (LiveConnection.hold) — bounded by
   * `HOLD_LIMIT_MS`, should one of those runs hang.
   */
  function wakeTogether(woken: readonly Group[]): Array<Promise<void>> {
    const shared = woken.length > 1 ? streamsSharedBy(woken) : undefined;
    const releases = new Map<Group, Array<() => void>>();
    for (const [connection, members] of shared ?? []) {
      const release = connection.hold();
      const timer = setTimeout(release, HOLD_LIMIT_MS);
      timer.unref();
      let left = members.size;
      const done = () => {
        if (--left > 0) return;
        clearTimeout(timer);
        release();
      };
      for (const group of members) {
        const dones = releases.get(group);
        if (dones) dones.push(done);
        else releases.set(group, [done]);
      }
    }
    return woken.map((group) => {
      const covering = group.runs.wake();
      const dones = releases.get(group);
      if (dones) {
        const settled = () => {
          for (const done of dones) done();
        };
        covering.then(settled, settled);
      }
      return group.runs.idle();
    });
  }

  /** The streams that hold subscriptions of two or more of `woken`, with those groups. */
  function streamsSharedBy(woken: readonly Group[]): Map<LiveConnection, Set<Group>> {
    const byStream = new Map<LiveConnection, Set<Group>>();
    for (const group of woken) {
      for (const subscription of group.subscribers) {
        // A stream of one subscription (every GET /live) is never shared: no entry for it.
        if (subscription.connection.subscriptions < 2) continue;
        const members = byStream.get(subscription.connection);
        if (members) members.add(group);
        else byStream.set(subscription.connection, new Set([group]));
      }
    }
    for (const [connection, members] of byStream) if (members.size < 2) byStream.delete(connection);
    return byStream;
  }

  /** Keeps the earliest write that woke the group since its run began (the live lag's start), and its revision. */
  function wokenBy(group: Group, row: Invalidation): void {
    const revisions = group.wokenByRevisions;
    // Rows that stand for writes the log never saw (revision -1, reader.ts) name no write a client waits for.
    if (row.revision > 0 && revisions.length < MAX_COVERS && !revisions.includes(row.revision)) revisions.push(row.revision);
    if (row.writtenAtMs !== undefined) group.wokenByWriteAtMs = Math.min(group.wokenByWriteAtMs ?? row.writtenAtMs, row.writtenAtMs);
  }

  function committedRevision(): number {
    return Math.max(readerRevision(), noticedRevision);
  }

  /** Did the group's run in flight (or its last run) begin after the notice numbered `notice`? Then it saw that row. */
  function seenSinceNotice(group: Group, notice: number | undefined): boolean {
    return notice !== undefined && group.startedAtNotice >= notice;
  }

  function concerns(group: Group, readSet: ReadSet, row: Invalidation): boolean {
    if (row.tenantId !== null && row.tenantId !== tenantKey(group.auth.tenantId)) return false;
    return readSetMatches(readSet.get(row.table), row.changes ?? null);
  }

  function missedDuringRun(group: Group, readSet: ReadSet): boolean {
    if (group.startedAtBatch < historyFloor) return true;
    for (const batch of history) {
      if (batch.seq <= group.startedAtBatch) continue;
      if (batch.expired) return true;
      for (let i = 0; i < batch.rows.length; i++) {
        if (!seenSinceNotice(group, batch.noticedAt[i]) && concerns(group, readSet, batch.rows[i]!)) return true;
      }
    }
    return false;
  }

  function trimHistory(): void {
    if (inFlight.size === 0) {
      history.length = 0;
      return;
    }
    let oldest = Infinity;
    for (const group of inFlight) oldest = Math.min(oldest, group.startedAtBatch);
    let drop = 0;
    while (drop < history.length && history[drop]!.seq <= oldest) drop++;
    if (drop > 0) history.splice(0, drop);
  }

  /** Wakeups are folded by the group's single flight, never debounced. */
  function schedule(group: Group): Promise<void> {
    void group.runs.wake();
    return group.runs.idle();
  }

  async function runOnce(group: Group): Promise<void> {
    group.startedAtBatch = batchSeq;
    group.startedAtNotice = noticeSeq;
    inFlight.add(group);
    try {
      await rerun(group);
    } finally {
      inFlight.delete(group);
      trimHistory();
      armRefresh(group);
    }
  }

  /** A liveQuery that declares `refreshMs` reruns that long after its last run, written to or not. */
  function armRefresh(group: Group): void {
    const refreshMs = refreshOf(group.entry);
    if (refreshMs === undefined || group.disposed || context.closed) return;
    clearTimeout(group.refreshTimer);
    group.refreshTimer = setTimeout(() => {
      if (!group.disposed) void group.runs.wake();
    }, refreshMs);
    group.refreshTimer.unref();
  }

  return { onNotice, onInvalidations, schedule, runOnce, committedRevision, concerns, missedDuringRun };
}

/** The longest one stream's frames wait for the other runs one write caused (wakeTogether). */
const HOLD_LIMIT_MS = 1_000;
/** Invalidation batches kept for runs in flight (a run older than that reruns: see missedDuringRun). */
const MAX_HISTORY = 10_000;
/** Revisions noticed and not read yet, at most (more means the reader is stalled; see `noticed`). */
const MAX_NOTICED = 10_000;
