/**
 * The SQL of the live cluster (cluster.ts), on fw's owner-only tables `_fw.live_nodes` and
 * `_fw.live_groups` (db/private-tables.ts), always through the owner's connection: the request roles
 * — and so any SQL a handler runs — can neither read nor write them. Notifications on
 * `fw_live_cluster` only say which row to read (`r:`, `w:`, `f:` + the group's hash): anyone can send
 * one, so none carries a result, and a forged one only makes a process read a row fw wrote.
 */
import { type Kysely, sql } from 'kysely';
import type pg from 'pg';
import type { Diagnostic } from '../../core/error-codes.ts';

export const CLUSTER_CHANNEL = 'fw_live_cluster';

/** What a notification on the cluster channel asks: read a published result, publish for a new follower, claim a freed group. */
export type ClusterNotice = { kind: 'result' | 'want' | 'freed'; hash: string };

const PREFIX = { result: 'r:', want: 'w:', freed: 'f:' } as const;

export function parseClusterNotice(payload: string | undefined): ClusterNotice | undefined {
  const kind = payload?.startsWith('r:') ? 'result' : payload?.startsWith('w:') ? 'want' : payload?.startsWith('f:') ? 'freed' : undefined;
  const hash = payload?.slice(2);
  return kind && hash && /^[0-9a-f]{64}$/.test(hash) ? { kind, hash } : undefined;
}

/** Who reruns a group: its owner node and epoch, and the version of the result it last published (0: none). */
export interface GroupOwnership {
  hash: string;
  node: string | null;
  epoch: number;
  version: number;
}

/** A result an owner published: the result (JSON) or the error of its run, and what the run read. */
export interface PublishedResult {
  version: number;
  groupKey: string;
  revision: number;
  covers: number[];
  result: string | null;
  /** The run's failure; `redacted` is what production shows instead (errors.ts). */
  error: { code: string; message: string; diagnostics: Diagnostic[]; redacted?: { message: string; diagnostics: Diagnostic[] } } | null;
  readSet: string | null;
}

export type ResultToPublish = Omit<PublishedResult, 'version' | 'groupKey'>;

/**
 * Renews this node's lease — on the process's dedicated cluster connection, never behind the queries
 * of the owner's pool (a burst of them must not make a live process look dead): whether it had
 * lapsed (the others took it for dead), and how many other nodes are alive.
 */
export async function renewLease(client: pg.Client, node: string, leaseMs: number): Promise<{ lapsed: boolean; peers: number }> {
  const { rows } = await client.query<{ lapsed: boolean | null; peers: string }>(
    `with previous as (select expires_at from "_fw"."live_nodes" where node = $1),
    renewed as (
      insert into "_fw"."live_nodes" (node, expires_at) values ($1, now() + make_interval(secs => $2))
      on conflict (node) do update set expires_at = excluded.expires_at
    )
    select (select expires_at < now() from previous) as lapsed,
           (select count(*) from "_fw"."live_nodes" where node <> $1 and expires_at > now()) as peers`,
    [node, leaseMs / 1000],
  );
  return { lapsed: rows[0]?.lapsed === true, peers: Number(rows[0]?.peers ?? 0) };
}

/**
 * Takes the groups no live node owns (new, released, or their owner's lease ran out), each with a new
 * epoch; returns the ownership of every group asked for that exists (a row another process is making
 * at the same moment may be missing: asked again on the next sweep). A concurrent claim of the same
 * row waits for this one and then sees a live owner: one wins. Rows are locked in hash order, so two
 * processes claiming overlapping groups never deadlock.
 */
export async function claimGroups(admin: Kysely<any>, node: string, groups: ReadonlyArray<{ hash: string; key: string }>): Promise<GroupOwnership[]> {
  const hashes = groups.map((group) => group.hash);
  const keys = groups.map((group) => group.key);
  const { rows } = await sql<{ hash: string; node: string | null; epoch: string; version: string }>`
    with claimed as (
      insert into "_fw"."live_groups" as g (group_hash, group_key, node)
      select hash, key, ${node} from unnest(${hashes}::text[], ${keys}::text[]) as t(hash, key) order by hash
      on conflict (group_hash) do update set node = excluded.node, epoch = g.epoch + 1, touched_at = now()
        where g.group_key = excluded.group_key
          and (g.node is null or not exists (select 1 from "_fw"."live_nodes" n where n.node = g.node and n.expires_at > now()))
      returning g.group_hash as hash, g.node, g.epoch, g.version
    )
    select hash, node, epoch, version from claimed
    union all
    select group_hash, node, epoch, version from "_fw"."live_groups"
    where group_hash = any(${hashes}::text[]) and group_hash not in (select hash from claimed)`.execute(admin);
  return rows.map((row) => ({ hash: row.hash, node: row.node, epoch: Number(row.epoch), version: Number(row.version) }));
}

/** The current ownership of groups, and whether each owner's lease still runs (false: the group is free to claim). */
export async function readOwnership(admin: Kysely<any>, hashes: readonly string[]): Promise<Array<GroupOwnership & { ownerAlive: boolean }>> {
  const { rows } = await sql<{ hash: string; node: string | null; epoch: string; version: string; alive: boolean }>`
    select g.group_hash as hash, g.node, g.epoch, g.version,
           exists (select 1 from "_fw"."live_nodes" n where n.node = g.node and n.expires_at > now()) as alive
    from "_fw"."live_groups" g where g.group_hash = any(${hashes}::text[])`.execute(admin);
  return rows.map((row) => ({ hash: row.hash, node: row.node, epoch: Number(row.epoch), version: Number(row.version), ownerAlive: row.alive }));
}

/** The results last published for groups (those that have one). */
export async function readPublished(admin: Kysely<any>, hashes: readonly string[]): Promise<Map<string, PublishedResult>> {
  const { rows } = await sql<{ hash: string; version: string; group_key: string; revision: string | null; covers: string[] | null; result: string | null; error: PublishedResult['error']; read_set: string | null }>`
    select group_hash as hash, version, group_key, revision, covers, result, error, read_set from "_fw"."live_groups"
    where group_hash = any(${hashes}::text[]) and version > 0`.execute(admin);
  return new Map(
    rows.map((row) => [
      row.hash,
      {
        version: Number(row.version),
        groupKey: row.group_key,
        revision: Number(row.revision ?? 0),
        covers: (row.covers ?? []).map(Number),
        result: row.result,
        error: row.error,
        readSet: row.read_set,
      },
    ]),
  );
}

/**
 * Publishes the owner's result, fenced: only while `node` still owns the group in `epoch` (a row lock
 * and a recheck of the latest row, so a takeover that committed first wins). Its version; undefined when
 * the node no longer owns the group.
 */
export async function publishResult(admin: Kysely<any>, node: string, epoch: number, hash: string, result: ResultToPublish): Promise<number | undefined> {
  const { rows } = await sql<{ version: string }>`
    with published as (
      update "_fw"."live_groups" set version = nextval('"_fw"."live_group_versions"'), revision = ${result.revision},
        covers = ${result.covers}::bigint[], result = ${result.result}, error = ${result.error === null ? null : JSON.stringify(result.error)}::jsonb,
        read_set = ${result.readSet}, touched_at = now()
      where group_hash = ${hash} and node = ${node} and epoch = ${epoch}
      returning group_hash, version
    )
    select version, pg_notify(${CLUSTER_CHANNEL}, ${PREFIX.result} || group_hash) from published`.execute(admin);
  return rows[0] === undefined ? undefined : Number(rows[0].version);
}

/** Gives groups up (their last subscriber here left, or the process stops) and tells the others to claim them. */
export async function releaseGroups(admin: Kysely<any>, node: string, groups: ReadonlyArray<{ hash: string; epoch: number }>): Promise<void> {
  if (groups.length === 0) return;
  await sql`
    with released as (
      update "_fw"."live_groups" g set node = null, touched_at = now()
      from unnest(${groups.map((group) => group.hash)}::text[], ${groups.map((group) => group.epoch)}::bigint[]) as t(hash, epoch)
      where g.group_hash = t.hash and g.node = ${node} and g.epoch = t.epoch
      returning g.group_hash
    )
    select pg_notify(${CLUSTER_CHANNEL}, ${PREFIX.freed} || group_hash) from released`.execute(admin);
}

/** Asks the owners of groups to publish their current results (this process follows them now). */
export async function wantResults(admin: Kysely<any>, hashes: readonly string[]): Promise<void> {
  if (hashes.length === 0) return;
  await sql`select pg_notify(${CLUSTER_CHANNEL}, ${PREFIX.want} || hash) from unnest(${hashes}::text[]) as t(hash)`.execute(admin);
}

/** Ends this node's lease at once (a clean stop): its groups are free for the others now. */
export async function leaveCluster(admin: Kysely<any>, node: string): Promise<void> {
  await sql`delete from "_fw"."live_nodes" where node = ${node}`.execute(admin);
}

/** Forgets rows nobody owns and nodes long dead. */
export async function pruneCluster(admin: Kysely<any>, olderThanMs: number): Promise<void> {
  await sql`
    delete from "_fw"."live_groups" g
    where g.touched_at < now() - make_interval(secs => ${olderThanMs / 1000})
      and not exists (select 1 from "_fw"."live_nodes" n where n.node = g.node and n.expires_at > now())`.execute(admin);
  await sql`delete from "_fw"."live_nodes" where expires_at < now() - make_interval(secs => ${olderThanMs / 1000})`.execute(admin);
}
