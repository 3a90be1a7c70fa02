import { liveQuery, z } from 'fwjs';

export default liveQuery({
  description: 'One ticket of the caller’s tenant with its conversation, oldest comment first, kept up to date.',
  policy: 'agent',
  args: { ticketId: z.uuid() },
  handler: async (ctx, args) => {
    // Another tenant's ticket is invisible here (row-level security): it reads as no ticket.
    const ticket = await ctx.db.selectFrom('tickets').selectAll().where('id', '=', args.ticketId).executeTakeFirst();
    const comments = ticket
      ? await ctx.db.selectFrom('comments').selectAll().where('ticket_id', '=', args.ticketId).orderBy('created_at', 'asc').orderBy('id', 'asc').execute()
      : [];
    return { ticket: ticket ?? null, comments };
  },
});
