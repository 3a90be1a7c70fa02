/**
 * One rerun per group across every process that shares a PostgreSQL database. Each group (a liveQuery,
 * its args and the caller's whole identity: groups.ts `groupKey`) has one **owner** among the processes
 * that hold it: the owner reruns it on the writes that concern it, exactly as a lone process does, and
 * publishes each new result in fw's owner-only table `_fw.live_groups`; the others **follow**: they
 * never rerun it on a write, but read the owner's result when told (`NOTIFY fw_live_cluster`, which only
 * names the row) and fan it out to their own subscribers.
 *
 * - **Who owns.** The first process to claim the group's row (cluster-store.ts). A process is alive
 *   while its lease in `_fw.live_nodes` runs (renewed every `leaseMs / 3`); a group whose owner's lease
 *   ran out, or that its owner gave up (its last subscriber there left, or the process stopped), is
 *   claimed by the next sweep of a follower — or at once on the `f:` notice a clean release sends.
 * - **Fencing.** Every claim draws a new epoch, and a publication only lands while its node still owns
 *   the row in its epoch: an owner that stalled past its lease cannot overwrite its successor. The new
 *   owner reruns the group as soon as it claims it and publishes that result whatever it is, so a write
 *   whose rerun died with the old owner is in it: none is lost across the move.
 * - **Ordering.** Versions come from one sequence and rise with every publication: a follower applies a
 *   row only when its version is above the one it holds, so it never goes back to an older result.
 * - **Only when followed.** An owner publishes only once another process asked for the group (`w:`),
 *   and stops when no other process is alive: a process alone pays one claim per group, nothing per run.
 * - **Identity.** A published row is keyed by the hash of the group's key and carries the key itself; a
 *   follower applies it only to the group of exactly that key. Handler SQL cannot write the table (the
 *   request roles have no privilege on it), and a notice it sends only makes a follower read a row.
 *
 * PGlite is one process: no cluster, every group is its process's own.
 */
import { createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';
import { FwError, type FwErrorCode } from '../../core/errors.ts';
import { printable } from '../../core/printable.ts';
import { readSetFromJson, readSetToJson } from '../read-set-json.ts';
import type { ClusterRole, ClusterStatus } from './api.ts';
import type { HubContext } from './context.ts';
import type { FanOut } from './fan-out.ts';
import type { Group, Groups } from './groups.ts';
import {
  claimGroups,
  CLUSTER_CHANNEL,
  leaveCluster,
  parseClusterNotice,
  publishResult,
  readOwnership,
  readPublished,
  releaseGroups,
  renewLease,
  wantResults,
  type ClusterNotice,
  type GroupOwnership,
  type PublishedResult,
  type ResultToPublish,
} from './cluster-store.ts';

export interface Cluster {
  start(): Promise<void>;
  /** One run of a group: its owner reruns it (`runLocally`); a follower reads the owner's result. */
  rerun(group: Group): Promise<void>;
  /** The owner's run ended (its result or error is the group's now): published when others follow it. */
  ran(group: Group): void;
  /** The group is gone from this process: an owner gives it up. */
  dispose(group: Group): void;
  roleOf(group: Group): ClusterRole | undefined;
  status(): ClusterStatus;
  /** Gives up every group and the lease, so the others take over at once. */
  close(): Promise<void>;
}

export interface ClusterOptions {
  groups: Groups;
  fanOut: FanOut;
  /** Runs the group now, or once more after the run in flight (scheduling.ts). */
  schedule(group: Group): Promise<void>;
  /** The group's rerun in this process (batched-reruns.ts). */
  runLocally(group: Group): Promise<void>;
  /** How long a process counts as alive after its last renewal (default 1500 ms): a dead owner's groups move within about that. */
  leaseMs: number;
  /**
   * The database's notifications reach this process (false behind a transaction pooler: the reader's
   * listener is `deaf`). Without them nobody hears results or requests for them, so every process
   * reruns its own groups, as a lone process does.
   */
  hears(): boolean;
}

interface Membership {
  readonly group: Group;
  readonly hash: string;
  role: ClusterRole;
  epoch: number;
  /** The version of the last result applied (follower) or published (owner). */
  version: number;
  /** Owner: another process asked for the group's results. */
  followed: boolean;
  /** Owner: publish the next result whatever it is (a takeover, or a follower that asked). */
  mustPublish: boolean;
  /** Owner: what was last published (result or error, and read set). */
  lastPublished: string | undefined;
  publishing: Promise<void>;
  /** Owner: a publication waits in `publishing` (it will take the group's state then). */
  queued: boolean;
  readonly claimed: Promise<void>;
  settleClaim(): void;
  /** Follower: when it last asked the owner for a result, and who waits for one. */
  wantedAt: number;
  arrivals: Array<() => void>;
}

export function createCluster(context: HubContext, { groups, fanOut, schedule, runLocally, leaseMs, hears }: ClusterOptions): Cluster {
  const admin = context.db.admin;
  const driver = context.db.driver;
  const node = randomBytes(12).toString('hex');
  const memberships = new Map<Group, Membership>();
  const byHash = new Map<string, Membership>();
  const counts = { notices: 0, wanted: 0, published: 0, received: 0, rejected: 0, takeovers: 0, lost: 0 };
  let peers = 0;
  let listener: pg.Client | undefined;
  let connecting = false;
  let sweepTimer: ReturnType<typeof setInterval> | undefined;
  let sweeping = false;
  let toClaim: Membership[] = [];
  let fetching: { batch: Set<Membership>; done: Promise<void> } | undefined;
  const wanted: string[] = [];
  /** What the last renewal of the lease said: other nodes alive, and whether it had lapsed since the sweep before. */
  let renewing = false;
  let lapsed = false;
  /** Groups owned when the hub began closing, given up together by `close`. */
  const closing: Membership[] = [];

  function join(group: Group): Membership {
    const existing = memberships.get(group);
    if (existing) return existing;
    let settleClaim!: () => void;
    const claimed = new Promise<void>((resolve) => (settleClaim = resolve));
    const membership: Membership = {
      group,
      hash: createHash('sha256').update(group.key).digest('hex'),
      role: 'pending',
      epoch: 0,
      version: 0,
      followed: false,
      mustPublish: false,
      lastPublished: undefined,
      publishing: Promise.resolve(),
      queued: false,
      claimed,
      settleClaim,
      wantedAt: 0,
      arrivals: [],
    };
    memberships.set(group, membership);
    byHash.set(membership.hash, membership);
    queueClaim(membership);
    return membership;
  }

  // ---- claims: batched per turn of the event loop (a burst of subscriptions is one statement) ----

  function queueClaim(membership: Membership): void {
    toClaim.push(membership);
    if (toClaim.length === 1) queueMicrotask(flushClaims);
  }

  function flushClaims(): void {
    const batch = toClaim.filter((membership) => !membership.group.disposed);
    toClaim = [];
    if (batch.length === 0 || context.closed) return;
    claimGroups(admin, node, batch.map((membership) => ({ hash: membership.hash, key: membership.group.key }))).then(
      (rows) => {
        const byRow = new Map(rows.map((row) => [row.hash, row]));
        for (const membership of batch) settle(membership, byRow.get(membership.hash));
      },
      (error: unknown) => {
        console.error(`fw live: claiming live groups failed (each process reruns them itself until a claim succeeds): ${printable((error as Error).message)}`);
        for (const membership of batch) {
          if (membership.role === 'pending') membership.role = 'solo';
          membership.settleClaim();
        }
      },
    );
  }

  /** Applies a claim's answer: this node owns the group, or follows its owner. */
  function settle(membership: Membership, row: GroupOwnership | undefined): void {
    if (memberships.get(membership.group) !== membership) return;
    const before = membership.role;
    if (row?.node === node) {
      if (before !== 'owner') becomeOwner(membership, row.epoch, before !== 'pending');
    } else if (before === 'pending' || before === 'solo') {
      becomeFollower(membership);
      // What the row holds now may predate this process's interest (the owner publishes only when
      // followed): wait for the answer to `w:`, which is newer.
      membership.version = Math.max(membership.version, row?.version ?? 0);
      want(membership);
    } else if (row && row.version > membership.version) {
      void fetchPublished(membership);
    }
    membership.settleClaim();
  }

  function becomeOwner(membership: Membership, epoch: number, takeover: boolean): void {
    membership.role = 'owner';
    membership.epoch = epoch;
    membership.lastPublished = undefined;
    if (!takeover) return;
    // Its followers wait for a result: rerun now (a write whose rerun died with the old owner is in
    // it) and publish whatever it is.
    counts.takeovers++;
    membership.followed = peers > 0;
    membership.mustPublish = true;
    void schedule(membership.group);
  }

  function becomeFollower(membership: Membership): void {
    if (membership.role === 'owner') {
      counts.lost++;
      groups.unindex(membership.group);
    }
    membership.role = 'follower';
    membership.followed = false;
  }

  // ---- runs ----

  async function rerun(group: Group): Promise<void> {
    const membership = join(group);
    await membership.claimed;
    if (group.disposed || context.closed) return;
    if (membership.role !== 'follower' || !hears()) return runLocally(group);
    await fetchPublished(membership);
    if (group.json !== undefined || group.lastError !== undefined) return;
    // No result yet: the owner publishes one when asked (or this process claims the group on a sweep).
    want(membership);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, WANT_WAIT_MS);
      timer.unref();
      membership.arrivals.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Asks the owner for the group's result (at most once per WANT_WAIT_MS), with the others asked in the same turn. */
  function want(membership: Membership): void {
    const now = Date.now();
    if (now - membership.wantedAt < WANT_WAIT_MS) return;
    membership.wantedAt = now;
    counts.wanted++;
    wanted.push(membership.hash);
    if (wanted.length > 1) return;
    setImmediate(() => {
      const hashes = wanted.splice(0);
      wantResults(admin, hashes).catch((error: unknown) => console.error(`fw live: asking for live results failed: ${printable((error as Error).message)}`));
    });
  }

  /**
   * Publishes the group's result when another process follows it and it changed (or must go out). One
   * publication at most waits per group, and it takes the group's state when its turn comes: a burst
   * of runs and requests while one is in flight costs one more statement, not one each.
   */
  function ran(group: Group): void {
    const membership = memberships.get(group);
    if (!membership || membership.role !== 'owner' || !membership.followed || peers === 0 || membership.queued) return;
    membership.queued = true;
    const epoch = membership.epoch;
    membership.publishing = membership.publishing
      .then(() => {
        membership.queued = false;
        if (membership.role !== 'owner' || membership.epoch !== epoch) return undefined;
        const result = resultOf(group);
        const fingerprint = `${result.result ?? ''}\u0000${JSON.stringify(result.error)}\u0000${result.readSet ?? ''}`;
        if (fingerprint === membership.lastPublished && !membership.mustPublish) return undefined;
        membership.lastPublished = fingerprint;
        membership.mustPublish = false;
        return publishResult(admin, node, epoch, membership.hash, result).then((version) => {
          if (version === undefined) {
            if (membership.role === 'owner' && membership.epoch === epoch) lose(membership);
            return;
          }
          counts.published++;
          membership.version = Math.max(membership.version, version);
        });
      })
      .catch((error: unknown) => {
        // Not published: the next run tries again (and a follower's sweep asks again).
        membership.lastPublished = undefined;
        console.error(`fw live: publishing a live result failed: ${printable((error as Error).message)}`);
      });
  }

  /** Another process claimed the group (this one stalled past its lease): follow it from now. */
  function lose(membership: Membership): void {
    becomeFollower(membership);
    void fetchPublished(membership);
  }

  function resultOf(group: Group): ResultToPublish {
    const error = group.lastError;
    return {
      revision: group.revision,
      covers: [...group.covers],
      result: error ? null : (group.json ?? null),
      error: error ? { code: error.code, message: error.message, diagnostics: error.diagnostics, ...(error.redacted ? { redacted: error.redacted } : {}) } : null,
      readSet: group.readSet ? readSetToJson(group.readSet) : null,
    };
  }

  // ---- following ----

  /**
   * Reads the owner's result of the group, with every other group asked for in the same turn of the
   * event loop: a burst of notices is one statement, not one per group in the owner's pool.
   */
  function fetchPublished(membership: Membership): Promise<void> {
    if (!fetching) {
      const batch = new Set<Membership>();
      const done = new Promise<void>((resolve) => setImmediate(resolve))
        .then(async () => {
          fetching = undefined;
          // Deaf, the group runs here (`rerun`): an owner's result could be older than that run's.
          const asked = [...batch].filter((member) => member.role === 'follower' && memberships.get(member.group) === member);
          if (asked.length === 0 || !hears()) return;
          const published = await readPublished(admin, asked.map((member) => member.hash));
          for (const member of asked) {
            const row = published.get(member.hash);
            if (row && member.role === 'follower') apply(member, row);
          }
        })
        .catch((error: unknown) => console.error(`fw live: reading published live results failed (read again on the next notice or sweep): ${printable((error as Error).message)}`));
      fetching = { batch, done };
    }
    fetching.batch.add(membership);
    return fetching.done;
  }

  /** The owner's result, to this process's subscribers of the group: what its own run would have sent. */
  function apply(membership: Membership, published: PublishedResult): void {
    const { group } = membership;
    if (published.version <= membership.version || group.disposed) return;
    if (published.groupKey !== group.key) {
      counts.rejected++;
      return;
    }
    membership.version = published.version;
    counts.received++;
    group.received++;
    group.revision = Math.max(group.revision, published.revision);
    if (published.readSet !== null) group.readSet = readSetFromJson(published.readSet);
    if (published.error) {
      const { code, message, diagnostics, redacted } = published.error;
      group.lastError = new FwError(code as FwErrorCode, message, { diagnostics, ...(redacted ? { redacted } : {}) });
      for (const subscription of group.subscribers) if (subscription.started) fanOut.sendError(subscription, group.lastError, '', false);
    } else if (published.result !== null) {
      group.lastError = undefined;
      if (published.result !== group.json) {
        group.json = published.result;
        group.seq++;
        group.covers = published.covers;
      }
      for (const subscription of group.subscribers) {
        if (subscription.started && subscription.sentSeq !== group.seq) fanOut.sendSnapshot(subscription);
      }
    }
    for (const arrived of membership.arrivals.splice(0)) arrived();
  }

  function onNotice(notice: ClusterNotice): void {
    counts.notices++;
    const membership = byHash.get(notice.hash);
    if (!membership) return;
    if (notice.kind === 'result' && membership.role === 'follower') void fetchPublished(membership);
    else if (notice.kind === 'freed' && membership.role === 'follower') queueClaim(membership);
    else if (notice.kind === 'want' && membership.role === 'owner') {
      // Asked by another process, which is alive whatever this one's last sweep counted.
      peers = Math.max(peers, 1);
      membership.followed = true;
      membership.mustPublish = true;
      if (membership.group.json !== undefined || membership.group.lastError !== undefined) ran(membership.group);
    }
  }

  // ---- the sweep: lease, takeovers, lost ownership, missed notices ----

  /**
   * Renews the lease on the cluster connection, whatever the sweep and the owner's pool are busy with.
   * Without that connection there is no renewal: a process that cannot hear the cluster lets its
   * groups go to the others.
   */
  async function renew(): Promise<void> {
    if (renewing || context.closed) return;
    const client = listener;
    if (!client) return void listen();
    renewing = true;
    try {
      const lease = await renewLease(client, node, leaseMs);
      peers = lease.peers;
      lapsed ||= lease.lapsed;
    } catch (error) {
      console.error(`fw live: renewing the cluster lease failed (retrying): ${printable((error as Error).message)}`);
    } finally {
      renewing = false;
    }
  }

  async function sweep(): Promise<void> {
    if (sweeping || context.closed) return;
    sweeping = true;
    try {
      const lease = { lapsed };
      lapsed = false;
      const all = [...memberships.values()].filter((membership) => membership.role !== 'pending');
      if (peers === 0) for (const membership of all) membership.followed = false;
      const following = all.filter((membership) => membership.role !== 'owner');
      if (lease.lapsed) {
        // The others took this process for dead: owners may have stopped publishing for it.
        for (const membership of following) membership.wantedAt = 0;
        await wantResults(admin, following.map((membership) => membership.hash));
      }
      // Alone and never taken for dead: nobody can have claimed this process's groups, so only the
      // others (a dead owner's, or made while a claim failed) need their rows read.
      const asked = peers === 0 && !lease.lapsed ? following : all;
      if (asked.length === 0) return;
      const rows = new Map((await readOwnership(admin, asked.map((membership) => membership.hash))).map((row) => [row.hash, row]));
      const free: Membership[] = [];
      for (const membership of asked) {
        const row = rows.get(membership.hash);
        if (membership.role === 'owner') {
          if (row && (row.node !== node || row.epoch !== membership.epoch)) lose(membership);
        } else if (!row || !row.ownerAlive) {
          free.push(membership);
        } else {
          if (row.version > membership.version) void fetchPublished(membership);
          if (membership.role === 'follower' && membership.group.json === undefined && membership.group.lastError === undefined) want(membership);
        }
      }
      if (free.length > 0) {
        const claimed = await claimGroups(admin, node, free.map((membership) => ({ hash: membership.hash, key: membership.group.key })));
        const byRow = new Map(claimed.map((row) => [row.hash, row]));
        for (const membership of free) settle(membership, byRow.get(membership.hash));
      }
    } catch (error) {
      console.error(`fw live: the cluster sweep failed (retrying): ${printable((error as Error).message)}`);
    } finally {
      sweeping = false;
    }
  }

  /** The dedicated connection that hears the cluster's notices; re-established by the sweep when lost. */
  async function listen(): Promise<void> {
    if (connecting || driver.kind !== 'postgres') return;
    connecting = true;
    const { default: pgModule } = await import('pg');
    const client = new pgModule.Client({ connectionString: driver.url, application_name: 'fw-live-cluster', keepAlive: true });
    const lost = () => {
      if (listener === client) listener = undefined;
      client.end().catch(() => undefined);
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      if (message.channel !== CLUSTER_CHANNEL) return;
      const notice = parseClusterNotice(message.payload);
      if (notice) onNotice(notice);
    });
    try {
      await client.connect();
      await client.query(`listen ${CLUSTER_CHANNEL}`);
      if (context.closed) await client.end();
      else listener = client;
    } catch (error) {
      client.end().catch(() => undefined);
      console.error(`fw live: cannot listen for the cluster's results (retrying on the next sweep): ${printable((error as Error).message)}`);
    } finally {
      connecting = false;
    }
  }

  return {
    async start() {
      await listen();
      await renew();
      sweepTimer = setInterval(() => {
        void renew();
        void sweep();
      }, Math.max(1, Math.floor(leaseMs / 3)));
      sweepTimer.unref();
    },
    rerun,
    ran,
    dispose(group) {
      const membership = memberships.get(group);
      if (!membership) return;
      memberships.delete(group);
      byHash.delete(membership.hash);
      for (const arrived of membership.arrivals.splice(0)) arrived();
      if (membership.role !== 'owner') return;
      // The hub is closing (its streams end first): `close` gives every group up in one statement.
      if (context.closed) {
        closing.push(membership);
        return;
      }
      const { epoch } = membership;
      void membership.publishing
        .then(() => releaseGroups(admin, node, [{ hash: membership.hash, epoch }]))
        .catch((error: unknown) => console.error(`fw live: giving up a live group failed: ${printable((error as Error).message)}`));
    },
    roleOf: (group) => memberships.get(group)?.role,
    status: () => {
      let owned = 0;
      let following = 0;
      for (const membership of memberships.values()) {
        if (membership.role === 'owner') owned++;
        else if (membership.role === 'follower') following++;
      }
      return { node, peers, owned, following, ...counts, listener: listener ? 'connected' : 'reconnecting' };
    },
    async close() {
      if (sweepTimer) clearInterval(sweepTimer);
      const owned = [...closing, ...[...memberships.values()].filter((membership) => membership.role === 'owner')];
      await Promise.all(owned.map((membership) => membership.publishing));
      try {
        await releaseGroups(admin, node, owned.map((membership) => ({ hash: membership.hash, epoch: membership.epoch })));
        await leaveCluster(admin, node);
      } catch (error) {
        console.error(`fw live: leaving the cluster failed (the others take over when this lease runs out): ${printable((error as Error).message)}`);
      }
      for (const membership of memberships.values()) {
        for (const arrived of membership.arrivals.splice(0)) arrived();
      }
      const client = listener;
      listener = undefined;
      await client?.end().catch(() => undefined);
    },
  };
}

/** How long a follower without a result waits for its owner's answer before asking again. */
const WANT_WAIT_MS = 2_000;
