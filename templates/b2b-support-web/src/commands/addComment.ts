import { command, FwError, z } from 'fwjs';

export default command({
  description: 'Comment on a ticket.',
  policy: 'agent',
  args: {
    ticketId: z.uuid(),
    body: z.string().trim().min(1).max(10_000),
  },
  handler: async (ctx, args) => {
    // Checked first for a clear 404: the foreign key alone would say "conflict", and row-level security
    // already makes another tenant's ticket invisible here.
    const ticket = await ctx.db.selectFrom('tickets').select('id').where('id', '=', args.ticketId).executeTakeFirst();
    if (!ticket) throw new FwError('not_found', `No ticket ${args.ticketId}.`);
    return ctx.db
      .insertInto('comments')
      .values({ ticket_id: args.ticketId, body: args.body, author: ctx.auth.userId! })
      .returningAll()
      .executeTakeFirstOrThrow();
  },
});
