import { command, FwError, sql, z } from 'fwjs';

export default command({
  description: 'Close a ticket.',
  policy: 'agent',
  args: { ticketId: z.uuid() },
  handler: async (ctx, args) => {
    // One conditional update: of two concurrent closes, exactly one succeeds; the other waits for the
    // row lock, sees the ticket closed and falls through to the conflict below.
    const closed = await ctx.db
      .updateTable('tickets')
      .set({ status: 'closed', updated_at: sql<Date>`now()` })
      .where('id', '=', args.ticketId)
      .where('status', '!=', 'closed')
      .returningAll()
      .executeTakeFirst();
    if (closed) return closed;
    const existing = await ctx.db.selectFrom('tickets').select('id').where('id', '=', args.ticketId).executeTakeFirst();
    if (!existing) throw new FwError('not_found', `No ticket ${args.ticketId}.`);
    throw new FwError('conflict', `Ticket ${args.ticketId} is already closed.`);
  },
});
