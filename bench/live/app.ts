/**
 * What both servers serve: the `bench_items` and `bench_groups` tables (tenant-scoped, row-level
 * security on, created by fw's own migration), the `benchItems({ group })` and `benchJoined({ group })`
 * liveQueries and their hand-written SQL twins, the subscribers' identities and the writer's statements.
 */
import { z } from 'zod';
import type { FwDatabase } from '../../runtime/db/database.ts';
import { applyMigration } from '../../runtime/db/migrate.ts';
import { liveQuery } from '../../runtime/core/entries.ts';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import { defineSchema, t, table } from '../../runtime/core/schema.ts';
import type { Shape, TenantLayout } from './config.ts';

export const schema = defineSchema({
  bench_items: table(
    {
      id: t.uuid().primaryKey().defaultRandom(),
      /** The group (the liveQuery's `group` arg) the row belongs to. */
      grp: t.integer(),
      /** 1, 2, 3… within the group: a subscriber sees a gap when a snapshot skipped a write. */
      n: t.integer(),
      /** The write's number in the run, across groups: the key of its commit time. */
      seq: t.integer(),
      title: t.text(),
    },
    { indexes: [{ columns: ['grp', 'n'] }] },
  ),
  /** One row per group and tenant in use (written before each run, never during it): the `join` shape's second table. */
  bench_groups: table(
    {
      id: t.uuid().primaryKey().defaultRandom(),
      grp: t.integer(),
      label: t.text(),
    },
    { indexes: [{ columns: ['grp'] }] },
  ),
});

/** Rows per snapshot: the newest of the group. */
export const SNAPSHOT_ROWS = 10;
export const LIVE_QUERIES = { items: 'benchItems', joined: 'benchJoined' } as const;
export type LiveQueryName = (typeof LIVE_QUERIES)[keyof typeof LIVE_QUERIES];
/**
 * The user watching group g: one per group, as in a support desk where each agent watches their own
 * board. (One user for every group would pass fw's per-caller limits, `maxGroupsPerCaller` 200.)
 */
export const benchUser = (group: number) => `bench-user-${group}`;

/** The liveQuery a point's subscribers subscribe to: `benchJoined` for `join`, else `benchItems` (`bulkK` too). */
export function liveQueryOf(shape: Shape): LiveQueryName {
  return shape === 'join' ? LIVE_QUERIES.joined : LIVE_QUERIES.items;
}

/** `bench_groups.label` of group g: a subscriber checks it, so a row joined to another group's row counts as wrong. */
export function groupLabel(group: number): string {
  return `group ${group}`;
}

/** fw: the liveQueries the subscribers subscribe to. Row-level security scopes them to the tenant. */
export function benchApp(): AppDefinition {
  const entries = {
    [LIVE_QUERIES.items]: liveQuery({
      policy: 'user',
      args: { group: z.number().int().nonnegative() },
      handler: (ctx, args) =>
        ctx.db
          .selectFrom('bench_items')
          .select(['seq', 'n', 'grp', 'title'])
          .where('grp', '=', args.group)
          .orderBy('n', 'desc')
          .limit(SNAPSHOT_ROWS)
          .execute(),
    }),
    /** The newest rows of the group, each joined to its group's row. */
    [LIVE_QUERIES.joined]: liveQuery({
      policy: 'user',
      args: { group: z.number().int().nonnegative() },
      handler: (ctx, args) =>
        ctx.db
          .selectFrom('bench_items as i')
          .innerJoin('bench_groups as g', (j) => j.onRef('g.grp', '=', 'i.grp'))
          .select(['i.seq', 'i.n', 'i.grp', 'i.title', 'g.label'])
          .where('g.grp', '=', args.group)
          .where('i.grp', '=', args.group)
          .orderBy('i.n', 'desc')
          .limit(SNAPSHOT_ROWS)
          .execute(),
    }),
  };
  return { entries: new Map(Object.entries(entries)), policies: {}, schema };
}

/**
 * bare: the same snapshots as parameterised statements (as the owner: the tenant is an explicit
 * `where` on every table, where fw has row-level security), by liveQuery name.
 */
export const BARE_SNAPSHOT_SQL: Record<LiveQueryName, string> = {
  [LIVE_QUERIES.items]: `select seq, n, grp, title from bench_items where tenant_id = $1 and grp = $2 order by n desc limit ${SNAPSHOT_ROWS}`,
  [LIVE_QUERIES.joined]:
    `select i.seq, i.n, i.grp, i.title, g.label from bench_items i join bench_groups g on g.grp = i.grp and g.tenant_id = i.tenant_id ` +
    `where i.tenant_id = $1 and g.tenant_id = $1 and g.grp = $2 and i.grp = $2 order by i.n desc limit ${SNAPSHOT_ROWS}`,
};
/** bare: the channel its writes notify, with `tenant|group` as payload. */
export const BARE_CHANNEL = 'bench_live';

/** Tenant number k (1-based) as a UUID. */
export function tenantId(k: number): string {
  return `00000000-0000-4000-8000-${k.toString(16).padStart(12, '0')}`;
}

export function tenantOfGroup(group: number, layout: TenantLayout): string {
  return tenantId(layout === 'one' ? 1 : group + 1);
}

/** The request path of a subscription to `query` for `group`, identical for both servers. */
export function livePath(query: LiveQueryName, group: number): string {
  return `/live/${query}?args=${encodeURIComponent(JSON.stringify({ group }))}`;
}

export function devHeaders(tenant: string, group: number): Record<string, string> {
  return { 'x-fw-user-id': benchUser(group), 'x-fw-tenant-id': tenant, accept: 'text/event-stream' };
}

export interface RowWrite {
  seq: number;
  group: number;
  n: number;
  tenant: string;
}

/**
 * One commit of the writer, as a single simple-protocol query (one round trip, one implicit
 * transaction): one INSERT statement of every row (one for `items` and `join`, K in K groups for
 * `bulkK`). fw's capture triggers log it and send `NOTIFY fw_live` at commit; the bare server needs its
 * own notifications, one per written group (payload `tenant|group`), in the same transaction.
 */
export function writeStatement(rows: RowWrite[], notifyBare: boolean): string {
  const insert =
    `insert into bench_items (tenant_id, grp, n, seq, title) values ` +
    rows.map(({ seq, group, n, tenant }) => `('${tenant}', ${group}, ${n}, ${seq}, 'item ${n} of group ${group}')`).join(', ');
  if (!notifyBare) return insert;
  const notified = [...new Set(rows.map((row) => `${row.tenant}|${row.group}`))];
  return `${insert}; select ${notified.map((payload) => `pg_notify('${BARE_CHANNEL}', '${payload}')`).join(', ')}`;
}

/**
 * Before every run: both tables emptied, then one `bench_groups` row for each of the point's groups,
 * in the group's tenant (so every tenant in use has the rows of its groups).
 */
export function resetStatements(groups: number, layout: TenantLayout): string[] {
  const rows = Array.from({ length: groups }, (_, group) => `('${tenantOfGroup(group, layout)}', ${group}, '${groupLabel(group)}')`);
  const inserts: string[] = [];
  for (let i = 0; i < rows.length; i += 1000) inserts.push(`insert into bench_groups (tenant_id, grp, label) values ${rows.slice(i, i + 1000).join(', ')}`);
  return ['truncate bench_items, bench_groups', ...inserts];
}

export async function prepareBenchDatabase(db: FwDatabase): Promise<void> {
  const migration = await applyMigration(db, schema);
  if (migration.blocked.length > 0) {
    throw new Error(`bench/live: migration blocked: ${migration.blocked.map((d) => d.message).join('; ')}`);
  }
}
