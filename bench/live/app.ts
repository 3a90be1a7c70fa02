/**
 * What both servers serve: the `bench_items` table (tenant-scoped, row-level security on, created by
 * fw's own migration), the `benchItems({ group })` liveQuery and its hand-written SQL twin, the
 * subscribers' identities and the writer's statements.
 */
import { z } from 'zod';
import type { FwDatabase } from '../../runtime/db/database.ts';
import { applyMigration } from '../../runtime/db/migrate.ts';
import { liveQuery } from '../../runtime/entries.ts';
import type { AppDefinition } from '../../runtime/registry.ts';
import { defineSchema, t, table } from '../../runtime/schema.ts';
import type { TenantLayout } from './config.ts';

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
});

/** Rows per snapshot: the newest of the group. */
export const SNAPSHOT_ROWS = 10;
export const LIVE_QUERY = 'benchItems';
export const BENCH_USER = 'bench-user';

/** fw: the liveQuery every subscriber subscribes to. Row-level security scopes it to the tenant. */
export function benchApp(): AppDefinition {
  const entries = {
    [LIVE_QUERY]: liveQuery({
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
  };
  return { entries: new Map(Object.entries(entries)), policies: {}, schema };
}

/** bare: the same snapshot as one parameterised statement (as the owner: the tenant is an explicit `where`). */
export const BARE_SNAPSHOT_SQL = `select seq, n, grp, title from bench_items where tenant_id = $1 and grp = $2 order by n desc limit ${SNAPSHOT_ROWS}`;
/** bare: the channel its writes notify, with `tenant|group` as payload. */
export const BARE_CHANNEL = 'bench_live';

/** Tenant number k (1-based) as a UUID. */
export function tenantId(k: number): string {
  return `00000000-0000-4000-8000-${k.toString(16).padStart(12, '0')}`;
}

export function tenantOfGroup(group: number, layout: TenantLayout): string {
  return tenantId(layout === 'one' ? 1 : group + 1);
}

/** The request path of a subscription to `group`, identical for both servers. */
export function livePath(group: number): string {
  return `/live/${LIVE_QUERY}?args=${encodeURIComponent(JSON.stringify({ group }))}`;
}

export function devHeaders(tenant: string): Record<string, string> {
  return { 'x-fw-user-id': BENCH_USER, 'x-fw-tenant-id': tenant, accept: 'text/event-stream' };
}

/**
 * One commit of the writer, as a single simple-protocol query (one round trip, one implicit
 * transaction). fw's capture triggers log it and send `NOTIFY fw_live` at commit; the bare server
 * needs its own notification, naming the group.
 */
export function writeStatement(write: { seq: number; group: number; n: number; tenant: string }, notifyBare: boolean): string {
  const { seq, group, n, tenant } = write;
  const insert =
    `insert into bench_items (tenant_id, grp, n, seq, title) ` +
    `values ('${tenant}', ${group}, ${n}, ${seq}, 'item ${n} of group ${group}')`;
  return notifyBare ? `${insert}; select pg_notify('${BARE_CHANNEL}', '${tenant}|${group}')` : insert;
}

export async function prepareBenchDatabase(db: FwDatabase): Promise<void> {
  const migration = await applyMigration(db, schema);
  if (migration.blocked.length > 0) {
    throw new Error(`bench/live: migration blocked: ${migration.blocked.map((d) => d.message).join('; ')}`);
  }
}
