import { command, FwError, sql, z } from 'fwjs';

export default command({
  description: 'Assign a ticket to an agent (admins only).',
  policy: 'admin',
  args: {
    ticketId: z.uuid(),
    assignee: z.string().trim().min(1).max(200),
  },
  handler: async (ctx, args) => {
    // Row-level security hides other tenants' tickets, so "not in this tenant" reads as "not found".
    const ticket = await ctx.db
      .updateTable('tickets')
      .set({ assignee: args.assignee, updated_at: sql<Date>`now()` })
      .where('id', '=', args.ticketId)
      .returningAll()
      .executeTakeFirst();
    if (!ticket) throw new FwError('not_found', `No ticket ${args.ticketId}.`);
    return ticket;
  },
});
