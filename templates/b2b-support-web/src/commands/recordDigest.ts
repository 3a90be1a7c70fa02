import { command, sql } from 'fwjs';

// Called by the nightlyDigest cron (src/crons.ts) in every workspace, never over HTTP (`system`): it runs as
// the system inside each tenant in turn, so row-level security scopes the counts to that tenant.
export default command({
  description: 'Records tonight’s counts of open, pending and SLA-breached tickets.',
  policy: 'system',
  handler: async (ctx) => {
    const counts = await ctx.db
      .selectFrom('tickets')
      .select([
        sql<number>`count(*) filter (where status = 'open')::int`.as('open_count'),
        sql<number>`count(*) filter (where status = 'pending')::int`.as('pending_count'),
        sql<number>`count(*) filter (where status != 'closed' and sla_breached_at is not null)::int`.as('breached_count'),
      ])
      .executeTakeFirstOrThrow();
    return ctx.db.insertInto('digests').values(counts).returningAll().executeTakeFirstOrThrow();
  },
});
