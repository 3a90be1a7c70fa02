import { action, sql, z } from 'fwjs';

// Scheduled by createTicket (ctx.scheduler.runAfter) to run when the ticket's first-response SLA runs out,
// as the agent who opened it, in their tenant. No `on`: nothing emits it, only the scheduler calls it, and
// an action is never callable over HTTP. A ticket still open with no reply from the team is marked
// breached and raised to at least `high`; one that was answered or closed is left alone.
export default action({
  description: 'Escalates a ticket nobody answered within its first-response SLA.',
  policy: 'system',
  args: { ticketId: z.uuid() },
  handler: async (ctx, args) => {
    // One conditional update, so a second delivery (actions are at-least-once) changes nothing.
    const breached = await ctx.db
      .updateTable('tickets')
      .set({
        sla_breached_at: sql<Date>`now()`,
        priority: sql`case when priority in ('low', 'normal') then 'high' else priority end`,
        updated_at: sql<Date>`now()`,
      })
      .where('id', '=', args.ticketId)
      .where('status', '=', 'open')
      .where(({ exists, not, selectFrom }) => not(exists(selectFrom('comments').select('id').whereRef('comments.ticket_id', '=', 'tickets.id').where('author_kind', '=', 'agent'))))
      .where('sla_breached_at', 'is', null)
      .returning(['id', 'priority'])
      .executeTakeFirst();
    if (breached) {
      await ctx.db.insertInto('comments').values({ ticket_id: args.ticketId, body: `First-response SLA missed: escalated to ${breached.priority}.`, author: 'support desk', author_kind: 'system' }).execute();
    }
    return { ticketId: args.ticketId, breached: Boolean(breached) };
  },
});
