import { command, z } from 'fwjs';
import { SLA_FIRST_RESPONSE_MS, ticketPriorities } from '../fw/schema.ts';

export default command({
  description: 'Open a support ticket in the caller’s tenant.',
  policy: 'agent',
  args: {
    subject: z.string().trim().min(1).max(200),
    body: z.string().max(10_000),
    priority: z.enum(ticketPriorities).optional(),
  },
  handler: async (ctx, args) => {
    const ticket = await ctx.db
      .insertInto('tickets')
      // Without a priority the ticket starts as `normal`, and the triage may set it (priority_source 'default').
      .values({ subject: args.subject, body: args.body, priority: args.priority, priority_source: args.priority ? 'user' : 'default', created_by: ctx.auth.userId! })
      .returningAll()
      .executeTakeFirstOrThrow();
    // Written to the outbox in this transaction; the triageTicket action listens for it.
    ctx.emit('ticket.created', { ticketId: ticket.id });
    // The SLA reminder: a call of the checkSla action in 4 hours, scheduled in this transaction (it exists
    // only if the ticket does). It escalates the ticket if nobody has answered it by then.
    await ctx.scheduler.runAfter(SLA_FIRST_RESPONSE_MS, 'checkSla', { ticketId: ticket.id });
    return ticket;
  },
});
