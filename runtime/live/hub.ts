import type { Kysely, RootOperationNode } from 'kysely';
import { failSpan, inSpan, type Span } from '../telemetry/tracing.ts';
import { recordRerun } from '../telemetry/metrics.ts';
import { randomBytes } from 'node:crypto';
import type { FwDatabase } from '../db/database.ts';
import type { Auth, EntryDefinition } from '../core/entry-types.ts';
import { FwError, toFwError } from '../core/errors.ts';
import { admitEntry, invokeEntry } from '../entry/pipeline.ts';
import { resolveTraceId } from '../core/trace.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { checkResume, type Invalidation, pruneInvalidations } from './log.ts';
import { createReadRecorder, type ReadRecorder } from './read-recorder.ts';
import { createReadIndex, tenantKey } from './read-index.ts';
import { compiledText, prefetchingKysely, prefetchStatements, type Prefetched } from './multiplex.ts';
import { describeReadSet, readSetMatches, type Access, type ReadSet } from './read-set.ts';
import { createInvalidationReader, type InvalidationReader } from './reader.ts';
import type { SseConnection } from './sse-connection.ts';
import { errorEvent, eventHead, resetEvent, snapshotParts, upToDateEvent } from './live-wire.ts';
import { printable } from '../core/printable.ts';
import { canonicalJson } from '../core/canonical-json.ts';
import { databaseSecret } from '../db/secrets.ts';
import { createRevisionCodec, type RevisionCodec } from './revision-codec.ts';
import { publicError } from '../core/public-error.ts';

export interface LiveOptions {
  /** Dev mode: internal error messages reach subscribers (otherwise only a trace id to quote). */
  dev?: boolean;
  /** Comment lines after this much silence, so proxies keep the stream open (default 15 000 ms). */
  heartbeatMs?: number;
  /** Subscriptions one connection may carry (default 64). */
  maxSubscriptionsPerConnection?: number;
  /** Subscriptions one tenant may hold in this process (default 10 000). */
  maxSubscriptionsPerTenant?: number;
  /**
   * Subscriptions one caller may hold in this process (default 1 000): a signed-in user, or for
   * anonymous callers their client address — so one of them cannot use up the tenant's budget.
   */
  maxSubscriptionsPerCaller?: number;
  /**
   * Distinct live groups (liveQuery × args) one caller may keep in this process (default 200). Each
   * group is a query re-run on a write; distinct args must not let one caller multiply that work.
   */
  maxGroupsPerCaller?: number;
  /** How long log rows are kept, i.e. how far back a resume is exact (default one hour). */
  retentionMs?: number;
  /** How often old log rows are pruned (default one minute; 0 disables pruning). */
  pruneIntervalMs?: number;
  /** Polling while no LISTEN connection is up (default 1000 ms). */
  pollIntervalMs?: number;
  /** Polling while LISTEN is up, as a safety net (default 10 000 ms). */
  safetyPollIntervalMs?: number;
  /** Reconnection delays of the LISTEN connection (defaults 500 ms … 30 s). */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Where failures of re-runs are reported (default: stderr). */
  onError?: (error: FwError, traceId: string) => void;
}

export interface SubscribeRequest {
  connection: SseConnection;
  /** The client's name for the subscription on a multiplexed stream. */
  key?: string;
  name: string;
  /** Raw args as received; validated here. */
  args: unknown;
  auth: Auth;
  lastRevision?: number;
  traceId: string;
  /** The stream carries only this subscription (`GET /live/:name`): a fatal error ends it. */
  exclusive?: boolean;
  /** The client's address: the caller limits count anonymous callers by it. */
  clientAddress?: string;
}

/** How a subscription started: its first event went out, or it failed before any (then it is gone). */
export type SubscribeOutcome = { ok: true; subscriptionId: string } | { ok: false; error: FwError };

interface Group {
  readonly key: string;
  readonly name: string;
  /** The earliest write (log row time) among those that woke the group since its last run began: the live lag's start. */
  wokenByWriteAtMs?: number | undefined;
  entry: EntryDefinition;
  args: unknown;
  readonly rawArgs: unknown;
  readonly auth: Auth;
  readonly subscribers: Set<Subscription>;
  /** What the last successful run read (read-set.ts), as indexed; undefined before one. */
  readSet: ReadSet | undefined;
  /** The invalidation batch that was the newest when the run in flight began (the run/install race). */
  startedAtBatch: number;
  /** The notice count when the run in flight (or the last run) began: it saw every write noticed by then. */
  startedAtNotice: number;
  /** The statement of the last successful run, when it issued exactly one SELECT (multiplex.ts), and its SQL. */
  lastStatement: { node: RootOperationNode; sql?: string } | undefined;
  /** The last result (JSON) and its sequence number; undefined until the first successful run. */
  json: string | undefined;
  /** The snapshot frame for `seq` at `revision`, encoded once: what comes before and after each subscriber's head. */
  frame: { seq: number; revision: number; prefix: Buffer; tail: Buffer } | undefined;
  seq: number;
  revision: number;
  lastError: FwError | undefined;
  running: Promise<void> | undefined;
  rerun: boolean;
  runs: number;
  unchangedRuns: number;
  lastRunMs: number;
  disposed: boolean;
}

interface Subscription {
  readonly id: string;
  readonly key: string | undefined;
  readonly connection: SseConnection;
  readonly group: Group;
  readonly createdAt: number;
  readonly tenantKey: string;
  /** Whom the caller limits count it against (`callerKey`). */
  readonly caller: string;
  readonly exclusive: boolean;
  /** The group seq the client holds: -1 = nothing yet (or data of unknown seq after `up-to-date`). */
  sentSeq: number;
  sentRevision: number | undefined;
  /** `head(subscription)`, made once. */
  headText?: string;
  started: boolean;
  ended: boolean;
}

export interface LiveHub {
  /** Opens the log reader (LISTEN/poll) and the pruning schedule. */
  start(): Promise<void>;
  /** The app to run liveQueries from; on a change every group re-runs (dev reloads). */
  setApp(app: AppDefinition): void;
  /** Throws `too_many_subscriptions` when `count` more subscriptions would pass a limit. */
  checkCapacity(auth: Auth, count: number, clientAddress?: string): void;
  readonly limits: { maxSubscriptionsPerConnection: number; maxSubscriptionsPerTenant: number; maxSubscriptionsPerCaller: number; maxGroupsPerCaller: number; heartbeatMs: number };
  /** Tracks a stream for heartbeats and shutdown (subscriptions attach theirs too). */
  attach(connection: SseConnection): void;
  /** Admits and starts one subscription; resolves when its first event was sent or it failed. */
  subscribe(request: SubscribeRequest): Promise<SubscribeOutcome>;
  /**
   * Tells a multiplexed stream that its subscription `key` could not start (`subscribe` failed): a
   * fatal `error` event, redacted like every error, and a 5xx logged under its trace id.
   */
  refuse(connection: SseConnection, key: string, error: FwError, traceId: string): void;
  status(): LiveStatus;
  debug(subscriptionId: string): SubscriptionDebug | undefined;
  /**
   * Ends every stream, stops the reader and waits for running queries. `reconnect` (graceful shutdown)
   * ends each stream with a comment and a short `retry:` so clients reconnect, through the load
   * balancer, to another process.
   */
  close(options?: { reconnect?: boolean }): Promise<void>;
}

export interface LiveStatus {
  revision: number;
  reader: ReturnType<InvalidationReader['status']>;
  connections: number;
  subscriptions: number;
  groups: number;
  runs: number;
  unchangedRuns: number;
  snapshotsSent: number;
  /** Transactions that reran several groups of one identity, the runs they made, and runs that fell back to their own. */
  batches: number;
  batchedRuns: number;
  batchFallbacks: number;
  /** Statements sent for several groups of one query shape at once, and the runs they answered. */
  multiplexed: number;
  multiplexedRuns: number;
  /** Multiplexed statements that failed (their groups then ran alone; the liveQuery is not multiplexed again). */
  multiplexFailures: number;
  /**
   * Early runs: groups woken by a signed log row in a notification (notice.ts), before the log was read,
   * and log rows that then woke no run of a group because one had begun after the notice.
   */
  noticeWakeups: number;
  coveredByNotice: number;
  retentionMs: number;
  liveQueries: Array<{
    name: string;
    groups: number;
    subscriptions: number;
    reads: string[];
    /** Groups whose every table is read through conditions (the others rerun on any write to some table). */
    preciseGroups: number;
    /** The first groups (at most 20), each with its read set and reruns. */
    groupList: LiveGroupStatus[];
  }>;
}

export interface LiveGroupStatus {
  args: unknown;
  tenantId: string | null;
  subscribers: number;
  /** Per table, the accesses of the last run: `all`, or conditions such as `author_id = "…"`; null before one. */
  readSet: Record<string, string[]> | null;
  runs: number;
  unchangedRuns: number;
}

export interface SubscriptionDebug {
  subscriptionId: string;
  key?: string;
  liveQuery: string;
  args: unknown;
  auth: { kind: Auth['kind']; userId: string | null; tenantId: string | null; role: string | null };
  createdAt: string;
  lastSentRevision: number | null;
  connection: { id: string; blocked: boolean; pendingEvents: number; written: number; superseded: number };
  group: {
    subscribers: number;
    reads: string[];
    /** Per table, the accesses of the last run (`all`, or conditions such as `author_id = "…"`). */
    readSet: Record<string, string[]> | null;
    revision: number;
    runs: number;
    unchangedRuns: number;
    lastRunMs: number;
    running: boolean;
    lastError: { code: string; message: string } | null;
  };
}

/**
 * The subscription hub of one runtime process: groups identical subscriptions, re-runs each affected
 * group once per batch of invalidations from the log reader, and pushes changed results.
 *
 * @example
 *   const live = createLiveHub(db);
 *   live.setApp(app);
 *   await live.start();
 *   createRuntimeHandler({ app, db, dev: true, live });
 */
export function createLiveHub(db: FwDatabase, options: LiveOptions = {}): LiveHub {
  const limits = {
    heartbeatMs: options.heartbeatMs ?? 15_000,
    maxSubscriptionsPerConnection: options.maxSubscriptionsPerConnection ?? 64,
    maxSubscriptionsPerTenant: options.maxSubscriptionsPerTenant ?? 10_000,
    maxSubscriptionsPerCaller: options.maxSubscriptionsPerCaller ?? 1_000,
    maxGroupsPerCaller: options.maxGroupsPerCaller ?? 200,
  };
  const retentionMs = options.retentionMs ?? 60 * 60_000;
  const pruneIntervalMs = options.pruneIntervalMs ?? 60_000;
  const onError =
    options.onError ??
    ((error: FwError, traceId: string) => console.error(`fw live: ${error.code} [trace ${traceId}] ${printable(error.message)}${error.diagnostics.length ? ` diagnostics=${printable(JSON.stringify(error.diagnostics))}` : ''}`));

  let app: AppDefinition | undefined;
  const groups = new Map<string, Group>();
  /** tenant → table → value → groups: which groups a log row can concern (read-index.ts). */
  const index = createReadIndex<Group>();
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
  /** liveQuery name → every table it was seen reading (status, and what a failing group reruns on). */
  const knownReads = new Map<string, Set<string>>();
  const subscriptions = new Map<string, Subscription>();
  const perTenant = new Map<string, number>();
  /** caller → group key → that caller's subscriptions in the group. */
  const perCaller = new Map<string, Map<string, number>>();
  let codec: RevisionCodec | undefined;
  const codecReady = databaseSecret(db.admin, 'live.revision').then((key) => (codec = createRevisionCodec(key)));
  codecReady.catch(() => undefined); // reported by the subscribe that awaits it
  /** The revision as this subscription's tenant sees it (revision-codec.ts). */
  const visible = (subscription: Subscription, revision: number) => codec!.encode(revision, subscription.tenantKey);
  const connections = new Set<SseConnection>();
  const counters = { runs: 0, unchangedRuns: 0, snapshotsSent: 0, batches: 0, batchedRuns: 0, batchFallbacks: 0, multiplexed: 0, multiplexedRuns: 0, multiplexFailures: 0, noticeWakeups: 0, coveredByNotice: 0 };
  /** liveQueries whose statements failed as one multiplexed statement: not tried again in this process. */
  const notMultiplexed = new Set<string>();
  let closed = false;
  const timers: Array<ReturnType<typeof setInterval>> = [];

  const reader = createInvalidationReader(db, {
    onInvalidations: ({ rows, expired }) => onInvalidations(rows, expired),
    onNotice: (row) => onNotice(row),
    ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
    ...(options.safetyPollIntervalMs === undefined ? {} : { safetyPollIntervalMs: options.safetyPollIntervalMs }),
    ...(options.reconnectMinMs === undefined ? {} : { reconnectMinMs: options.reconnectMinMs }),
    ...(options.reconnectMaxMs === undefined ? {} : { reconnectMaxMs: options.reconnectMaxMs }),
  });

  /** Reruns the groups a notice concerns; their runs are what the reader's confirming read waits for. */
  function onNotice(row: Invalidation): Promise<unknown> | undefined {
    noticeSeq++;
    if (noticed.size >= MAX_NOTICED) noticed.clear(); // the reader is far behind: rows then simply rerun
    noticed.set(row.revision, noticeSeq);
    noticedRevision = Math.max(noticedRevision, row.revision);
    const runs: Array<Promise<void>> = [];
    for (const group of concernedGroups(row)) {
      counters.noticeWakeups++;
      wokenBy(group, row);
      runs.push(schedule(group));
    }
    return runs.length === 0 ? undefined : Promise.allSettled(runs);
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
      for (const group of [...groups.values()]) schedule(group);
      return;
    }
    const affected = new Set<Group>();
    rows.forEach((row, i) => {
      // A write to a non-tenant table (tenant null) concerns every tenant; otherwise only its own.
      for (const group of concernedGroups(row)) {
        if (seenSinceNotice(group, noticedAt[i])) {
          counters.coveredByNotice++;
          continue;
        }
        affected.add(group);
        wokenBy(group, row);
      }
    });
    for (const group of affected) schedule(group);
  }

  /** The groups whose read sets a log row can satisfy (read-index.ts). */
  function concernedGroups(row: Invalidation): Set<Group> {
    return index.match({ table: row.table, tenantId: row.tenantId, changes: row.changes ?? null });
  }

  /** Keeps the earliest write that woke the group since its run began (the live lag's start). */
  function wokenBy(group: Group, row: Invalidation): void {
    if (row.writtenAtMs !== undefined) group.wokenByWriteAtMs = Math.min(group.wokenByWriteAtMs ?? row.writtenAtMs, row.writtenAtMs);
  }

  /** The revision to label a run that starts now with: every write up to it is visible to its snapshot. */
  function committedRevision(): number {
    return Math.max(reader.revision(), noticedRevision);
  }

  /** Did the group's run in flight (or its last run) begin after the notice numbered `notice`? Then it saw that row. */
  function seenSinceNotice(group: Group, notice: number | undefined): boolean {
    return notice !== undefined && group.startedAtNotice >= notice;
  }

  /** Whether a log row concerns a group with this read set (its tenant, then its accesses). */
  function concerns(group: Group, readSet: ReadSet, row: Invalidation): boolean {
    if (row.tenantId !== null && row.tenantId !== tenantKey(group.auth.tenantId)) return false;
    return readSetMatches(readSet.get(row.table), row.changes ?? null);
  }

  /**
   * The run/install race: did a batch delivered since the run began concern the read set it installs?
   * Those batches were matched against the previous read set only.
   */
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

  // ---- groups ----

  function groupKey(name: string, argsJson: string, auth: Auth): string {
    return JSON.stringify([name, argsJson, auth.kind, auth.userId, auth.tenantId, auth.role]);
  }

  function indexReads(group: Group, readSet: ReadSet): void {
    index.set(group, group.auth.tenantId, readSet);
    group.readSet = readSet;
    let known = knownReads.get(group.name);
    if (!known) knownReads.set(group.name, (known = new Set()));
    for (const table of readSet.keys()) known.add(table);
  }

  /** Every table as read whole: a group that has not run successfully yet still reruns on their writes. */
  function wholeTables(tables: Iterable<string>): ReadSet {
    return new Map([...tables].map((table): [string, Access[]] => [table, [{ conditions: [] }]]));
  }

  /** What the run read that no capture trigger watches (CTE names are the statement's own, not relations). */
  function unmanagedReads(recorder: ReadRecorder): string[] {
    const tables = app?.schema.tables;
    if (!tables) return [];
    const unknown = [...recorder.tables].filter((name) => !Object.hasOwn(tables, name) && !recorder.cteNames.has(name));
    return [...unknown, ...recorder.otherSchemaTables].sort();
  }

  function declaredReads(entry: EntryDefinition): string[] {
    const reads = entry.options.reads;
    return Array.isArray(reads) ? (reads as string[]) : [];
  }

  /** Runs the group now, or once more after the run in flight (wakeups are folded, never debounced). */
  function schedule(group: Group): Promise<void> {
    if (group.running) {
      group.rerun = true;
      return group.running;
    }
    // The loop decides to stop and clears `running` in one synchronous step: a wakeup that comes after
    // it stopped must start a new loop, not set `rerun` on one that already ended (a lost rerun).
    group.running = (async () => {
      for (;;) {
        group.rerun = false;
        group.startedAtBatch = batchSeq;
        group.startedAtNotice = noticeSeq;
        inFlight.add(group);
        try {
          await runQueued(group);
        } catch (thrown) {
          group.running = undefined;
          throw thrown;
        } finally {
          inFlight.delete(group);
          trimHistory();
        }
        if (!group.rerun || group.disposed || closed) {
          group.running = undefined;
          return;
        }
      }
    })();
    return group.running;
  }

  // ---- batched reruns ----

  /** Groups due to run, by identity, gathered until the current turn of the event loop ends. */
  const queued = new Map<string, Array<{ group: Group; done: () => void }>>();
  let flushQueued = false;

  /** Runs the group with the other groups of its identity woken in the same turn (runBatch). */
  function runQueued(group: Group): Promise<void> {
    return new Promise((resolve) => {
      const key = JSON.stringify([group.auth.kind, group.auth.userId, group.auth.tenantId, group.auth.role]);
      let list = queued.get(key);
      if (!list) queued.set(key, (list = []));
      list.push({ group, done: resolve });
      if (!flushQueued) {
        flushQueued = true;
        queueMicrotask(flush);
      }
    });
  }

  function flush(): void {
    flushQueued = false;
    for (const [key, list] of queued) {
      queued.delete(key);
      for (let i = 0; i < list.length; i += MAX_BATCH) {
        const chunk = list.slice(i, i + MAX_BATCH);
        const run = chunk.length === 1 ? runGroup(chunk[0]!.group) : runBatch(chunk.map((item) => item.group));
        void run.catch(() => undefined).finally(() => {
          for (const item of chunk) item.done();
        });
      }
    }
  }

  /**
   * Reruns groups of one identity in ONE read-only transaction (one BEGIN, identity proof and COMMIT
   * instead of one each), one handler after the other; each fans out as soon as its handler returns.
   * When one fails, the transaction is given up and that group and the ones after it run alone, so
   * every group ends exactly as its solo run would (a failure then is its own).
   */
  async function runBatch(batch: Group[]): Promise<void> {
    let done = 0;
    counters.batches++;
    // Read before the transaction's first statement (the multiplexed one): every run's snapshot then
    // reflects at least the changes up to this revision.
    const revision = committedRevision();
    try {
      const label = `liveQuery ${[...new Set(batch.map((group) => group.name))].join(', ')} (batched reruns)`;
      await db.transaction({ readOnly: true, auth: batch[0]!.auth, traceId: resolveTraceId(undefined), label }, async (trx) => {
        const prefetched = await multiplex(trx, batch);
        for (const group of batch) {
          if (!group.disposed && !closed) {
            try {
              const mine = prefetched.get(group);
              const before = mine?.size ?? 0;
              await runGroup(group, mine ? prefetchingKysely(trx, mine) : trx, revision);
              if (mine && mine.size < before) counters.multiplexedRuns++;
              counters.batchedRuns++;
            } catch {
              return; // COMMIT then answers ROLLBACK; the rest run alone below
            }
          }
          done++;
        }
      });
    } catch {
      // BEGIN failed, or the transaction was given up: what did not run goes alone.
    }
    counters.batchFallbacks += batch.length - done;
    await Promise.all(batch.slice(done).map((group) => runGroup(group)));
  }

  /**
   * Sends the statements of groups of one query shape as one (multiplex.ts): groups of the same
   * liveQuery whose last run issued exactly one SELECT, with the same SQL text. A failure leaves the
   * transaction aborted: `runBatch` then runs the groups alone, and the liveQuery is not multiplexed again.
   */
  async function multiplex(trx: Kysely<any>, batch: Group[]): Promise<Map<Group, Prefetched>> {
    const shapes = new Map<string, Group[]>();
    for (const group of batch) {
      const statement = group.lastStatement;
      if (!statement || notMultiplexed.has(group.name)) continue;
      statement.sql ??= compiledText(statement.node);
      const key = JSON.stringify([group.name, statement.sql]);
      const same = shapes.get(key) ?? [];
      same.push(group);
      shapes.set(key, same);
    }
    const prefetched = new Map<Group, Prefetched>();
    for (const groups of shapes.values()) {
      if (groups.length < 2) continue;
      try {
        const results = await prefetchStatements(trx, groups.map((group) => group.lastStatement!.node));
        counters.multiplexed++;
        groups.forEach((group, index) => prefetched.set(group, results[index]!));
      } catch (thrown) {
        counters.multiplexFailures++;
        notMultiplexed.add(groups[0]!.name);
        throw thrown;
      }
    }
    return prefetched;
  }

  function runGroup(group: Group, shared?: Kysely<any>, revision?: number): Promise<void> {
    return inSpan(`fw.live.rerun ${group.name}`, { attributes: { 'fw.live.query': group.name, 'fw.live.batched': shared !== undefined } }, (span) =>
      runGroupTraced(group, span, shared, revision),
    );
  }

  /** One run of the group: alone in its own transaction, or in `shared` (then a failure is thrown, not reported). */
  async function runGroupTraced(group: Group, span: Span, shared?: Kysely<any>, sharedRevision?: number): Promise<void> {
    // Read before the query (in a shared transaction: before its first statement): the snapshot then
    // reflects at least every change up to this revision.
    const revision = sharedRevision ?? committedRevision();
    const traceId = span.isRecording() ? span.spanContext().traceId : resolveTraceId(undefined);
    // Writes that arrive during this run wake the next one, and count from their own time.
    const wokenByWriteAtMs = group.wokenByWriteAtMs;
    group.wokenByWriteAtMs = undefined;
    const recorder = createReadRecorder(app?.schema);
    const started = performance.now();
    let delivered = false;
    /** Installs what the run read and fans its result out; runs before the read-only COMMIT. */
    const deliver = (result: unknown) => {
      const declared = declaredReads(group.entry);
      if (recorder.rawStatements > 0 && declared.length === 0) {
        throw new FwError(
          'internal',
          `liveQuery "${group.name}" runs raw SQL, so fw cannot see which tables it reads. Declare them: liveQuery({ reads: ['table', …], … }).`,
        );
      }
      // A view, another schema's table, a table the schema does not declare: no capture trigger logs its
      // writes, so the group would never rerun for them. Refused unless the liveQuery says what it reads.
      const unknown = declared.length === 0 ? unmanagedReads(recorder) : [];
      if (unknown.length > 0) {
        throw new FwError(
          'internal',
          `liveQuery "${group.name}" reads ${unknown.map((name) => `"${name}"`).join(', ')}, which fw does not capture writes to (not a table of the app's schema: a view, or another schema's table), so it would never update. Declare the tables it depends on: liveQuery({ reads: ['table', …], … }).`,
          { diagnostics: unknown.map((name) => ({ path: `liveQuery.${group.name}`, code: 'unmanaged_read', message: `"${name}" is not a table fw captures writes to.` })) },
        );
      }
      delivered = true;
      group.lastRunMs = performance.now() - started;
      counters.runs++;
      group.runs++;
      if (group.disposed) return;
      indexReads(group, readSetOf(recorder, declared));
      const [only, ...more] = recorder.statements;
      group.lastStatement = only && more.length === 0 && only.kind === 'SelectQueryNode' ? { node: only } : undefined;
      if (missedDuringRun(group, group.readSet!)) group.rerun = true;
      const json = JSON.stringify(result === undefined ? null : result);
      group.lastError = undefined;
      const changed = json !== group.json;
      span.setAttributes({ 'fw.live.rows': Array.isArray(result) ? result.length : result == null ? 0 : 1, 'fw.live.changed': changed, 'fw.live.subscribers': group.subscribers.size });
      if (!changed) {
        counters.unchangedRuns++;
        group.unchangedRuns++;
      } else {
        group.json = json;
        group.seq++;
      }
      group.revision = Math.max(group.revision, revision);
      for (const subscription of group.subscribers) {
        if (subscription.started && subscription.sentSeq !== group.seq) sendSnapshot(subscription);
      }
      recordRerun(group.name, changed, wokenByWriteAtMs);
    };
    try {
      // Admitted at subscribe (and again when the app reloads): a rerun goes straight to the handler.
      const run = { name: group.name, auth: group.auth, traceId, external: true, args: group.args, admitted: true, span: false, plugins: [recorder], onReadResult: deliver, ...(shared ? { within: shared } : {}) };
      const result = await invokeEntry({ app: app!, db }, group.entry, run);
      if (!delivered) deliver(result);
    } catch (thrown) {
      if (shared && !delivered) throw thrown;
      const error = toFwError(thrown);
      // The result went out before a COMMIT that then failed: what was read stands (nothing was written).
      if (delivered) {
        if (error.status >= 500) onError(error, traceId);
        return;
      }
      group.lastRunMs = performance.now() - started;
      counters.runs++;
      group.runs++;
      failSpan(span, error);
      group.lastError = error;
      // What made the run fail may lie in rows its last good read set does not cover (the failing run
      // read other ones): until a run succeeds, the group reruns on any write to a table the liveQuery
      // is known to read, or this run read, besides its last read set.
      if (!group.disposed) {
        const tables = new Set([...(knownReads.get(group.name) ?? []), ...recorder.tables, ...declaredReads(group.entry), ...(group.readSet?.keys() ?? [])]);
        indexReads(group, wholeTables([...tables].filter((table) => !recorder.cteNames.has(table) || app?.schema.tables[table] !== undefined)));
      }
      let streamed = false;
      for (const subscription of group.subscribers) {
        if (subscription.started) sendError(subscription, error, traceId, false);
        streamed ||= subscription.started;
      }
      // A first run that fails is reported by the request that waits for it (it answers with the error).
      if (error.status >= 500 && streamed) onError(error, traceId);
    }
  }

  /** The run's read set: what its statements read, and declared tables read whole. */
  function readSetOf(recorder: ReadRecorder, declared: readonly string[]): ReadSet {
    const readSet = recorder.readSet();
    for (const name of recorder.cteNames) if (!app?.schema.tables[name]) readSet.delete(name);
    for (const table of declared) readSet.set(table, [{ conditions: [] }]);
    return readSet;
  }

  // ---- subscriptions ----

  function sendSnapshot(subscription: Subscription): void {
    const { group } = subscription;
    subscription.sentSeq = group.seq;
    subscription.sentRevision = group.revision;
    counters.snapshotsSent++;
    // The result is serialised and encoded once per run and revision (every subscriber of a group has
    // its tenant, so its revision token); only the small head differs between subscribers.
    let frame = group.frame;
    if (!frame || frame.seq !== group.seq || frame.revision !== group.revision) {
      const token = visible(subscription, group.revision);
      frame = group.frame = { seq: group.seq, revision: group.revision, ...snapshotParts(token, group.json!) };
    }
    subscription.connection.send(subscription.id, { parts: [frame.prefix, head(subscription), frame.tail] });
  }

  function sendError(subscription: Subscription, error: FwError, traceId: string, fatal: boolean): void {
    subscription.connection.send(subscription.id, errorEvent(head(subscription), error, traceId, fatal, options.dev === true));
  }

  function head(subscription: Subscription): string {
    return (subscription.headText ??= eventHead(subscription.id, subscription.key));
  }

  function remove(subscription: Subscription): void {
    if (subscription.ended) return;
    subscription.ended = true;
    subscriptions.delete(subscription.id);
    const count = (perTenant.get(subscription.tenantKey) ?? 1) - 1;
    if (count > 0) perTenant.set(subscription.tenantKey, count);
    else perTenant.delete(subscription.tenantKey);
    const { group } = subscription;
    const held = perCaller.get(subscription.caller);
    const inGroup = (held?.get(group.key) ?? 1) - 1;
    if (inGroup > 0) held!.set(group.key, inGroup);
    else held?.delete(group.key);
    if (held && held.size === 0) perCaller.delete(subscription.caller);
    group.subscribers.delete(subscription);
    if (group.subscribers.size === 0) disposeGroup(group);
  }

  function disposeGroup(group: Group): void {
    group.disposed = true;
    if (groups.get(group.key) === group) groups.delete(group.key);
    index.delete(group);
  }

  async function start(subscription: Subscription, token: number | undefined): Promise<void> {
    const { group } = subscription;
    // What the client holds is its tenant's token for a revision (revision-codec.ts).
    const lastRevision = token === undefined ? undefined : codec!.decode(token, subscription.tenantKey);
    if (lastRevision !== undefined) {
      // The read set decides, and it depends on the data: run the query first unless the group has a
      // result (a resume then costs a run, not a snapshot on the wire), and let a run in flight install
      // what it read. Deciding on a guess — the tables seen before — would also leave a group that was
      // never run deaf to writes.
      await ensureResult(group);
      if (group.running) await group.running;
      if (subscription.ended) return;
      const readSet = group.readSet ?? new Map<string, Access[]>();
      const revision = reader.revision();
      const runsBefore = group.runs;
      // Only log rows that can touch what the group reads count (read-set.ts).
      const check = await checkResume(db.admin, { lastRevision, tables: [...readSet.keys()], tenantId: group.auth.tenantId, relevant: (row) => concerns(group, readSet, row) });
      if (subscription.ended) return;
      // A run that finished during the check was not sent to this (unstarted) subscription: send it now.
      if (check.kind === 'up-to-date' && !(group.json !== undefined && group.runs !== runsBefore)) {
        subscription.started = true;
        subscription.sentRevision = Math.max(lastRevision, revision);
        subscription.connection.send(subscription.id, upToDateEvent(head(subscription), visible(subscription, subscription.sentRevision)));
        return;
      }
      if (check.kind === 'reset') {
        await ensureResult(group);
        if (subscription.ended) return;
        const message =
          check.reason === 'revision_expired'
            ? `Revision ${token} is older than the retained log; start again from this snapshot.`
            : `Revision ${token} is unknown to this database; start again from this snapshot.`;
        // Its own slot, queued before the snapshot: a snapshot must not replace it while unsent.
        subscription.connection.send(`${subscription.id}:reset`, resetEvent(head(subscription), check.reason, message, visible(subscription, check.oldestRevision)));
        subscription.started = true;
        sendSnapshot(subscription);
        return;
      }
    }
    await ensureResult(group);
    if (subscription.ended) return;
    subscription.started = true;
    sendSnapshot(subscription);
  }

  /** Makes sure the group has a result: joins the run in flight, or runs it. Throws the run's error. */
  async function ensureResult(group: Group): Promise<void> {
    while (group.json === undefined) {
      await (group.running ?? schedule(group));
      if (group.json === undefined && group.lastError) throw group.lastError;
      if (group.disposed) return;
    }
  }

  async function subscribe(request: SubscribeRequest): Promise<SubscribeOutcome> {
    if (closed) return { ok: false, error: new FwError('unavailable', 'The live hub is shutting down.') };
    try {
      if (!app) throw new FwError('unavailable', 'The app is not loaded yet.');
      const entry = app.entries.get(request.name);
      if (!entry || entry.kind !== 'liveQuery') {
        const known = [...app.entries].filter(([, e]) => e.kind === 'liveQuery').map(([n]) => n).sort();
        // The names are help in dev; in production they are the app's surface, not for whoever asks.
        throw new FwError('not_found', options.dev ? `No liveQuery named "${request.name}".` : 'No such liveQuery.', {
          diagnostics: [{ path: 'name', code: 'unknown_entry', message: options.dev ? `Known liveQueries: ${known.join(', ') || '(none)'}` : 'No such liveQuery.' }],
        });
      }
      const args = await admitEntry({ app, db }, entry, { name: request.name, auth: request.auth, traceId: request.traceId, args: request.args, external: true });
      await codecReady;
      const key = groupKey(request.name, canonicalJson(request.args), request.auth);
      const caller = callerKey(request.auth, request.clientAddress);
      checkCapacity(request.auth, 1, request.clientAddress, key);
      let group = groups.get(key);
      if (!group) {
        group = {
          key,
          name: request.name,
          entry,
          args,
          rawArgs: request.args,
          auth: request.auth,
          subscribers: new Set(),
          readSet: undefined,
          startedAtBatch: 0,
          startedAtNotice: 0,
          lastStatement: undefined,
          json: undefined,
          frame: undefined,
          seq: 0,
          revision: 0,
          lastError: undefined,
          running: undefined,
          rerun: false,
          runs: 0,
          unchangedRuns: 0,
          lastRunMs: 0,
          disposed: false,
        };
        groups.set(key, group);
        // Not indexed until its first run installs what it read; writes during that run are matched
        // against it then (missedDuringRun).
      }
      const tenantKey = request.auth.tenantId ?? '';
      const subscription: Subscription = {
        id: `sub_${randomBytes(9).toString('base64url')}`,
        key: request.key,
        connection: request.connection,
        group,
        createdAt: Date.now(),
        tenantKey,
        caller,
        exclusive: request.exclusive === true,
        sentSeq: -1,
        sentRevision: undefined,
        started: false,
        ended: false,
      };
      subscriptions.set(subscription.id, subscription);
      perTenant.set(tenantKey, (perTenant.get(tenantKey) ?? 0) + 1);
      const held = perCaller.get(caller) ?? new Map<string, number>();
      held.set(key, (held.get(key) ?? 0) + 1);
      perCaller.set(caller, held);
      group.subscribers.add(subscription);
      attach(request.connection);
      request.connection.onClose(() => remove(subscription));
      try {
        await start(subscription, request.lastRevision);
      } catch (thrown) {
        remove(subscription);
        throw thrown;
      }
      return { ok: true, subscriptionId: subscription.id };
    } catch (thrown) {
      return { ok: false, error: toFwError(thrown) };
    }
  }

  function attach(connection: SseConnection): void {
    if (connections.has(connection) || connection.isClosed) return;
    connections.add(connection);
    connection.onClose(() => connections.delete(connection));
  }

  /**
   * Refuses (429 `too_many_subscriptions`, naming the limit) `count` more subscriptions of a caller —
   * and, with `groupKey`, one in a group the caller does not hold yet — past any limit.
   */
  function checkCapacity(auth: Auth, count: number, clientAddress?: string, groupKey?: string): void {
    const held = perTenant.get(auth.tenantId ?? '') ?? 0;
    if (held + count > limits.maxSubscriptionsPerTenant) {
      throw tooMany('tenant', `This tenant holds ${held} live subscriptions in this process; the limit is ${limits.maxSubscriptionsPerTenant}.`, 'maxSubscriptionsPerTenant');
    }
    const caller = perCaller.get(callerKey(auth, clientAddress));
    const callerHeld = caller ? [...caller.values()].reduce((a, b) => a + b, 0) : 0;
    if (callerHeld + count > limits.maxSubscriptionsPerCaller) {
      throw tooMany('caller', `You hold ${callerHeld} live subscriptions in this process; the limit per ${auth.userId ? 'user' : 'client'} is ${limits.maxSubscriptionsPerCaller}.`, 'maxSubscriptionsPerCaller');
    }
    if (groupKey !== undefined && !caller?.has(groupKey) && (caller?.size ?? 0) >= limits.maxGroupsPerCaller) {
      throw tooMany('groups', `You keep ${caller!.size} distinct live queries (liveQuery × args) open in this process; the limit is ${limits.maxGroupsPerCaller}.`, 'maxGroupsPerCaller');
    }
  }

  return {
    limits,
    async start() {
      await reader.start();
      const heartbeat = setInterval(() => {
        for (const connection of connections) connection.heartbeat(limits.heartbeatMs);
      }, Math.max(50, Math.floor(limits.heartbeatMs / 2)));
      heartbeat.unref();
      timers.push(heartbeat);
      if (pruneIntervalMs > 0) {
        const prune = setInterval(() => {
          pruneInvalidations(db.admin, { olderThanMs: retentionMs }).catch((error: unknown) =>
            console.error(`fw live: pruning the invalidation log failed: ${printable((error as Error).message)}`),
          );
        }, pruneIntervalMs);
        prune.unref();
        timers.push(prune);
      }
    },

    setApp(next) {
      const changed = app !== undefined && app !== next;
      app = next;
      if (!changed) return;
      // The new code may read other tables: learn them again from the next runs.
      knownReads.clear();
      for (const group of [...groups.values()]) {
        const entry = next.entries.get(group.name);
        const readmit = entry && entry.kind === 'liveQuery'
          ? admitEntry({ app: next, db }, entry, { name: group.name, auth: group.auth, traceId: resolveTraceId(undefined), args: group.rawArgs, external: true })
          : Promise.reject(new FwError('not_found', `liveQuery "${group.name}" no longer exists.`));
        readmit.then(
          (args) => {
            group.entry = entry!;
            group.args = args;
            void schedule(group);
          },
          (thrown: unknown) => {
            const error = toFwError(thrown);
            const traceId = resolveTraceId(undefined);
            for (const subscription of [...group.subscribers]) {
              sendError(subscription, error, traceId, true);
              remove(subscription);
              if (subscription.exclusive) subscription.connection.end();
            }
          },
        );
      }
    },

    checkCapacity,
    attach,
    refuse(connection, key, error, traceId) {
      connection.send(`key:${key}`, errorEvent(eventHead(null, key), error, traceId, true, options.dev === true));
      if (error.status >= 500) onError(error, traceId);
    },
    subscribe,

    status() {
      const byName = new Map<string, { groups: number; subscriptions: number; preciseGroups: number; groupList: LiveGroupStatus[] }>();
      for (const group of groups.values()) {
        const entry = byName.get(group.name) ?? { groups: 0, subscriptions: 0, preciseGroups: 0, groupList: [] };
        entry.groups++;
        entry.subscriptions += group.subscribers.size;
        const precise = group.readSet !== undefined && [...group.readSet.values()].every((accesses) => accesses.every((access) => access.conditions.length > 0));
        if (precise) entry.preciseGroups++;
        if (entry.groupList.length < STATUS_GROUPS) {
          entry.groupList.push({
            args: group.rawArgs,
            tenantId: group.auth.tenantId,
            subscribers: group.subscribers.size,
            readSet: group.readSet ? describeReadSet(group.readSet) : null,
            runs: group.runs,
            unchangedRuns: group.unchangedRuns,
          });
        }
        byName.set(group.name, entry);
      }
      return {
        revision: reader.revision(),
        reader: reader.status(),
        connections: connections.size,
        subscriptions: subscriptions.size,
        groups: groups.size,
        ...counters,
        retentionMs,
        liveQueries: [...byName]
          .map(([name, counts]) => ({ name, ...counts, reads: [...(knownReads.get(name) ?? [])].sort() }))
          .sort((a, b) => a.name.localeCompare(b.name)),
      };
    },

    debug(subscriptionId) {
      const subscription = subscriptions.get(subscriptionId);
      if (!subscription) return undefined;
      const { group, connection } = subscription;
      return {
        subscriptionId: subscription.id,
        ...(subscription.key === undefined ? {} : { key: subscription.key }),
        liveQuery: group.name,
        args: group.rawArgs,
        auth: { kind: group.auth.kind, userId: group.auth.userId, tenantId: group.auth.tenantId, role: group.auth.role },
        createdAt: new Date(subscription.createdAt).toISOString(),
        lastSentRevision: subscription.sentRevision ?? null,
        connection: {
          id: connection.id,
          blocked: connection.isBlocked,
          pendingEvents: connection.pendingSlots,
          written: connection.written,
          superseded: connection.superseded,
        },
        group: {
          subscribers: group.subscribers.size,
          reads: [...(group.readSet?.keys() ?? [])].sort(),
          readSet: group.readSet ? describeReadSet(group.readSet) : null,
          revision: group.revision,
          runs: group.runs,
          unchangedRuns: group.unchangedRuns,
          lastRunMs: Math.round(group.lastRunMs * 100) / 100,
          running: group.running !== undefined,
          lastError: group.lastError ? { code: group.lastError.code, message: group.lastError.message } : null,
        },
      };
    },

    async close(options = {}) {
      if (closed) return;
      closed = true;
      for (const timer of timers.splice(0)) clearInterval(timer);
      const finalText = options.reconnect ? ': fw shutting down, reconnect\nretry: 250\n\n' : undefined;
      for (const connection of [...connections]) connection.end(finalText);
      await reader.close();
      await Promise.all([...groups.values()].map((group) => group.running));
    },
  };
}

/** Invalidation batches kept for runs in flight (a run older than that reruns: see missedDuringRun). */
const MAX_HISTORY = 10_000;
/** Revisions noticed and not read yet, at most (more means the reader is stalled; see `noticed`). */
const MAX_NOTICED = 10_000;
/** Groups of one identity rerun in one transaction at most (more go in parallel transactions). */
const MAX_BATCH = 32;
/** Groups per liveQuery listed with their read sets in `status()`. */
const STATUS_GROUPS = 20;


/** Whom the caller limits count: a signed-in user (in their tenant), or an anonymous client by address. */
function callerKey(auth: Auth, clientAddress: string | undefined): string {
  return auth.userId ? `user:${auth.tenantId ?? ''}:${auth.userId}` : `client:${clientAddress ?? 'unknown'}`;
}

function tooMany(limit: 'tenant' | 'caller' | 'groups', message: string, option: string): FwError {
  return new FwError('too_many_subscriptions', `${message} Close unused subscriptions.`, {
    diagnostics: [{ path: 'subscriptions', code: `limit_${limit}`, message, hint: `Close subscriptions you no longer render, or raise live.${option} (docs/live.md).` }],
  });
}
