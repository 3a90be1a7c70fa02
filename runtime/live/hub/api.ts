/**
 * The live hub's public face: its options, what a subscribe asks and answers, and what status and
 * debug report. `runtime/live/hub.ts` (createLiveHub) re-exports them; the rooms of hub/ share them.
 */
import type { Clock } from '../../core/clock.ts';
import type { Auth } from '../../core/entry-types.ts';
import type { FwError } from '../../core/errors.ts';
import type { AppDefinition } from '../../core/app-definition.ts';
import type { InvalidationReader } from '../reader.ts';
import type { LiveConnection } from '../live-connection.ts';

export interface LiveOptions {
  /** Dev mode: internal error messages reach subscribers (otherwise only a trace id to quote). */
  dev?: boolean;
  /** The runtime's time, which a liveQuery's `ctx.now()` reads (default the system clock; tests move one). */
  clock?: Clock;
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
  /**
   * On PostgreSQL, processes sharing the database rerun each group once between them: its owner reruns
   * it and the others fan its result out (default on; `false`: every process reruns its own groups).
   */
  cluster?: boolean;
  /** How long a process counts as alive after renewing its lease (default 1500 ms): a dead owner's groups move within about that. */
  clusterLeaseMs?: number;
}

export interface SubscribeRequest {
  connection: LiveConnection;
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
  clientAddress?: string | undefined;
}

/** How a subscription started: its first event went out, or it failed before any (then it is gone). */
export type SubscribeOutcome = { ok: true; subscriptionId: string } | { ok: false; error: FwError };

export interface LiveHub {
  /** Opens the log reader (LISTEN/poll) and the pruning schedule. */
  start(): Promise<void>;
  /** The app to run liveQueries from; on a change every group re-runs (dev reloads). */
  setApp(app: AppDefinition): void;
  /** Throws `too_many_subscriptions` when `count` more subscriptions would pass a limit. */
  checkCapacity(auth: Auth, count: number, clientAddress?: string): void;
  readonly limits: { maxSubscriptionsPerConnection: number; maxSubscriptionsPerTenant: number; maxSubscriptionsPerCaller: number; maxGroupsPerCaller: number; heartbeatMs: number };
  /** Tracks a stream for heartbeats and shutdown (subscriptions attach theirs too). */
  attach(connection: LiveConnection): void;
  /** Admits and starts one subscription; resolves when its first event was sent or it failed. */
  subscribe(request: SubscribeRequest): Promise<SubscribeOutcome>;
  /**
   * Tells a multiplexed stream that its subscription `key` could not start (`subscribe` failed): a
   * fatal `error` event, redacted like every error, and a 5xx logged under its trace id.
   */
  refuse(connection: LiveConnection, key: string, error: FwError, traceId: string): void;
  status(): LiveStatus;
  /**
   * Log revisions as `auth`'s tenant sees them on its streams (revision-codec.ts): what a command's
   * answer carries when asked (`x-fw-live-revision: 1`), for the client's optimistic updates.
   */
  revisionTokens(auth: Auth, revisions: readonly number[]): Promise<number[]>;
  debug(subscriptionId: string): SubscriptionDebug | undefined;
  /**
   * Ends every stream, stops the reader and waits for running queries. `reconnect` (graceful shutdown)
   * ends each stream with a comment and a short `retry:` so clients reconnect, through the load
   * balancer, to another process.
   */
  close(options?: { reconnect?: boolean }): Promise<void>;
}

/** What this process is to a group: `solo` reruns it without the cluster (its claim failed; retried by the sweep). */
export type ClusterRole = 'pending' | 'owner' | 'follower' | 'solo';

export interface ClusterStatus {
  node: string;
  /** Other processes alive on this database. */
  peers: number;
  owned: number;
  following: number;
  /** Notices heard on the cluster channel, and results this process asked other owners for. */
  notices: number;
  wanted: number;
  /** Results this process published, and results of other owners it applied. */
  published: number;
  received: number;
  /** Rows refused: their key was not the group's. */
  rejected: number;
  /** Groups this process took over from a process that died or gave them up, and groups it lost to another. */
  takeovers: number;
  lost: number;
  listener: 'connected' | 'reconnecting';
}

/** What a hub counts as it runs (status() reports them). */
export interface HubCounters {
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
}

export interface LiveStatus extends HubCounters {
  revision: number;
  /** This process in the cluster of processes sharing the database (cluster.ts); null on PGlite or with `cluster: false`. */
  cluster: ClusterStatus | null;
  reader: ReturnType<InvalidationReader['status']>;
  connections: number;
  subscriptions: number;
  groups: number;
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
  /** Results another process's run made that this one applied; and whether this process reruns the group (`owner`) or follows its owner. */
  received: number;
  role: ClusterRole | null;
  /** When the last run ended, how long it took, the size of the result it holds (JSON bytes), and the code of its failure if it failed. */
  lastRunAt: string | null;
  lastRunMs: number;
  resultBytes: number | null;
  lastError: string | null;
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

