/**
 * The hub's groups: every subscription of one liveQuery with the same args and the same identity
 * shares one group, which runs the query once for all of them and keeps the last result. Here are the
 * group and its members (subscriptions), and the registry that finds groups by key and by what they
 * read (read-index.ts).
 */
import type { RootOperationNode } from 'kysely';
import type { Auth, EntryDefinition } from '../../core/entry-types.ts';
import type { FwError } from '../../core/errors.ts';
import { createSingleFlight, type SingleFlight } from '../../core/single-flight.ts';
import type { Invalidation } from '../log.ts';
import { createReadIndex } from '../read-index.ts';
import type { Access, ReadSet } from '../read-set.ts';
import type { LiveConnection } from '../live-connection.ts';

export interface Group {
  readonly key: string;
  readonly name: string;
  /** The earliest write (log row time) among those that woke the group since its last run began: the live lag's start. */
  wokenByWriteAtMs?: number | undefined;
  /**
   * The revisions whose writes woke the group since its last run began (at most {@link MAX_COVERS}):
   * the next run's result includes them, and its snapshot says so (`covers`), so an optimistic update
   * waiting for one of them knows its write is shown (client/live-store.ts).
   */
  wokenByRevisions: number[];
  /** What the run that made the current result covers (sent with its snapshot). */
  covers: readonly number[];
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
  /**
   * The statement of the last successful run, when it issued exactly one SELECT (multiplex.ts), with
   * its SQL text and whether it can be multiplexed (`withRowPosition`), computed when first needed.
   */
  lastStatement: { node: RootOperationNode; sql?: string; multiplexable?: boolean } | undefined;
  /** The last result (JSON) and its sequence number; undefined until the first successful run. */
  json: string | undefined;
  /** The snapshot frame for `seq` at `revision`, encoded once: what comes before and after each subscriber's head. */
  frame: { seq: number; revision: number; prefix: Buffer; tail: Buffer } | undefined;
  seq: number;
  revision: number;
  lastError: FwError | undefined;
  /**
   * The group's runs, one at a time: a wakeup during a run folds into one follow-up run (never
   * debounced). Closed when the group is disposed or the hub closes: no run starts after that.
   */
  readonly runs: SingleFlight<void>;
  runCount: number;
  /** Results another process's run made and this one applied (cluster.ts): runs of the group, not here. */
  received: number;
  unchangedRuns: number;
  lastRunMs: number;
  /** When the last run ended (epoch ms; 0 before one), for the status and the dashboard. */
  lastRunAt: number;
  disposed: boolean;
  /** The next rerun a declared `refreshMs` asks for (armed after every run). */
  refreshTimer: ReturnType<typeof setTimeout> | undefined;
}

/** The most revisions a snapshot lists as covered; a client waiting for another one settles by time. */
export const MAX_COVERS = 32;

/** One subscription: a member of its group, on one stream. */
export interface Subscription {
  readonly id: string;
  readonly key: string | undefined;
  readonly connection: LiveConnection;
  readonly group: Group;
  readonly createdAt: number;
  /**
   * An anonymous caller's address, by which the caller limits count it (`callerKey`); undefined for a
   * signed-in user, counted by the group's identity. Nothing per subscription that the group already
   * holds: with thousands of idle subscribers every string kept per member is memory (bench/live).
   */
  readonly clientAddress: string | undefined;
  readonly exclusive: boolean;
  /** The group seq the client holds: -1 = nothing yet (or data of unknown seq after `up-to-date`). */
  sentSeq: number;
  sentRevision: number | undefined;
  /** `head(subscription)`, made once. */
  headText?: string;
  started: boolean;
  ended: boolean;
}

/** The tenant a subscription's revision tokens are made for (revision-codec.ts): its group's, or '' for none. */
export function tenantKeyOf(subscription: Subscription): string {
  return subscription.group.auth.tenantId ?? '';
}

/** What a new group is made of: the liveQuery, its admitted and raw args, and the caller's identity. */
export interface GroupSeed {
  key: string;
  name: string;
  entry: EntryDefinition;
  args: unknown;
  rawArgs: unknown;
  auth: Auth;
}

export interface Groups {
  readonly byKey: ReadonlyMap<string, Group>;
  /** liveQuery name → every table it was seen reading (status, and what a failing group reruns on). */
  readonly knownReads: Map<string, Set<string>>;
  /** The group of `seed.key`, made (not yet indexed: its first run installs what it read) when new. */
  open(seed: GroupSeed): Group;
  /** Installs what the group's run read: it reruns on writes that concern it from now on. */
  indexReads(group: Group, readSet: ReadSet): void;
  /** The groups whose read sets a log row can satisfy (read-index.ts). */
  concerned(row: Invalidation): Set<Group>;
  /** Stops matching writes against the group: another process reruns it (cluster.ts); its next run here indexes it again. */
  unindex(group: Group): void;
  /** The group has no subscriber left: forgotten, unindexed, and its runs stop. */
  dispose(group: Group): void;
}

/** The key of a group: the liveQuery, its args as canonical JSON, and the whole identity. */
export function groupKey(name: string, argsJson: string, auth: Auth): string {
  return JSON.stringify([name, argsJson, auth.kind, auth.userId, auth.tenantId, auth.role]);
}

/** The key of an identity: groups of one identity rerun together (batched-reruns.ts). */
export function identityKey(auth: Auth): string {
  return JSON.stringify([auth.kind, auth.userId, auth.tenantId, auth.role]);
}

/** Every table as read whole: a group that has not run successfully yet still reruns on their writes. */
export function wholeTables(tables: Iterable<string>): ReadSet {
  return new Map([...tables].map((table): [string, Access[]] => [table, [{ conditions: [] }]]));
}

/**
 * The registry of groups; `run` is one run of a group (scheduling.ts), which its single flight repeats,
 * and `disposed` hears of a group gone (the cluster gives it up).
 */
export function createGroups(run: (group: Group) => Promise<void>, disposed: (group: Group) => void = () => undefined): Groups {
  const byKey = new Map<string, Group>();
  /** tenant → table → value → groups: which groups a log row can concern (read-index.ts). */
  const index = createReadIndex<Group>();
  const knownReads = new Map<string, Set<string>>();

  return {
    byKey,
    knownReads,
    open(seed) {
      const existing = byKey.get(seed.key);
      if (existing) return existing;
      const group: Group = {
        ...seed,
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
        runs: createSingleFlight(() => run(group)),
        runCount: 0,
        received: 0,
        wokenByRevisions: [],
        covers: [],
        unchangedRuns: 0,
        lastRunMs: 0,
        lastRunAt: 0,
        disposed: false,
        refreshTimer: undefined,
      };
      byKey.set(seed.key, group);
      // Not indexed until its first run installs what it read; writes during that run are matched
      // against it then (missedDuringRun).
      return group;
    },
    indexReads(group, readSet) {
      index.set(group, group.auth.tenantId, readSet);
      group.readSet = readSet;
      let known = knownReads.get(group.name);
      if (!known) knownReads.set(group.name, (known = new Set()));
      for (const table of readSet.keys()) known.add(table);
    },
    concerned: (row) => index.match({ table: row.table, tenantId: row.tenantId, changes: row.changes ?? null }),
    unindex: (group) => index.delete(group),
    dispose(group) {
      group.disposed = true;
      clearTimeout(group.refreshTimer);
      void group.runs.close();
      if (byKey.get(group.key) === group) byKey.delete(group.key);
      index.delete(group);
      disposed(group);
    },
  };
}

/** How often the liveQuery asks to be rerun whatever is written (`refreshMs`), if it does. */
export function refreshOf(entry: EntryDefinition): number | undefined {
  const refreshMs = entry.options.refreshMs;
  return typeof refreshMs === 'number' ? refreshMs : undefined;
}
