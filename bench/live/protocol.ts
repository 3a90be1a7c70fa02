/** The IPC between the orchestrator (`run.ts`) and its child processes: one server, the subscriber processes. */
import type { LiveQueryName } from './app.ts';
import type { VariantName } from './config.ts';

/** Every request carries an id; the child answers it once, with a result or an error. */
export type Request<T> = T & { id: number };
export type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; message: string };
/** Sent once by a child when it is ready to take requests. */
export type Ready = { type: 'ready'; port?: number } | { type: 'failed'; message: string };

export interface ServerSpec {
  variant: VariantName;
  url: string;
  poolSize: number;
  /** fw: `live.maxSubscriptionsPerTenant` (the default, 10 000, unless one tenant needs more). */
  maxSubscriptionsPerTenant: number;
  /** `baseline`: the checkout whose fw variant this server runs. */
  baselineDir?: string;
}

/** Live counters of a server (monotonic since start, except the gauges). */
export interface LiveCounters {
  /** Snapshot queries run: fw's group runs (`hub.status().runs`), bare's statements. */
  snapshotQueries: number;
  /** Runs whose result equalled the last one (fw; bare never compares). */
  unchangedRuns: number;
  /** Reads of the invalidation log (fw; 0 for bare, which has no log). */
  logReads: number;
  /** Notifications that carried a signed log row and woke its groups before any read (fw's early runs; 0 for bare). */
  notices: number;
  /** Notifications received on the LISTEN connection. */
  notifications: number;
  /** Snapshot frames written to subscribers. */
  framesSent: number;
  connections: number;
  subscriptions: number;
  groups: number;
}

export interface ServerStats extends LiveCounters {
  /** CPU time of the server process (user + system), in microseconds. */
  cpuUs: number;
  eventLoopUtilization: number;
  /** Driver calls (`pg.Client#query`), i.e. PostgreSQL round trips, of every connection of the process. */
  databaseCalls: number;
  elapsedMs: number;
}

export interface MemorySample {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** Resident bytes of each V8 heap space (`physical_space_size`). */
  spaces: Record<string, number>;
}

/**
 * `regular`: after full collections, as `global.gc()` does them (V8 keeps its young generation grown).
 * `lastResort`: after the collection V8 runs under memory pressure, which also shrinks the young
 * generation: the footprint an idle process converges to.
 */
export type GcKind = 'regular' | 'lastResort';

export type ServerRequest = { type: 'memory'; gc: GcKind } | { type: 'reset' } | { type: 'stats' } | { type: 'close' };

export interface SubscriberSpec {
  group: number;
  tenant: string;
}

/** One commit, as the writer saw it: its rows and its acknowledgement on the shared monotonic clock. */
export interface WriteRecord {
  /** The rows it inserted, each in another group (one row, or K for `bulkK`): `seq` is unique in the run. */
  rows: Array<{ seq: number; group: number }>;
  /** When the writer sent the statement, on the same clock, µs. */
  sentUs: number;
  /** `process.hrtime` (CLOCK_MONOTONIC, the same in every process of the machine) when COMMIT returned, µs. */
  ackUs: number;
  measured: boolean;
}

export type ClientRequest =
  | { type: 'open'; baseUrl: string; query: LiveQueryName; subscribers: SubscriberSpec[]; concurrency: number }
  | { type: 'writes'; writes: WriteRecord[] }
  | { type: 'start' }
  | { type: 'progress' }
  | { type: 'finish' }
  | { type: 'close' };

export interface ClientProgress {
  /** Deliveries due: for every row of every measured commit, the subscribers of its group in this process. */
  expected: number;
  /** Deliveries seen: (subscriber, row of a measured commit) pairs whose row arrived in a snapshot. */
  received: number;
}

export interface ClientResult extends ClientProgress {
  /** Commit-to-frame latency of every delivery, in µs. */
  latenciesUs: Float64Array;
  /** Snapshot events received during the measurement. */
  frames: number;
  /** Deliveries whose subscriber got a later row of the group but never this one (a snapshot skipped it). */
  skipped: number;
  /** Rows of another group in a subscriber's snapshot, or joined to another group's row (must be 0). */
  wrongRows: number;
  /** Streams that ended or failed. */
  disconnects: number;
  /** Event-loop delay of the subscriber process during the measurement, in ms. */
  loopDelayMs: { p50: number; p99: number; max: number };
  eventLoopUtilization: number;
  cpuUs: number;
  elapsedMs: number;
}
