import { command, FwError, sql, z } from 'fwjs';

export default command({
  description: 'Reply to the customer on a ticket, or log the customer’s answer.',
  policy: 'agent',
  args: {
    ticketId: z.uuid(),
    body: z.string().trim().min(1).max(10_000),
    /** `agent` (default): a reply to the customer, who now has the ticket (pending). `customer`: their answer, logged by an agent. */
    from: z.enum(['agent', 'customer']).optional(),
  },
  handler: async (ctx, args) => {
    const from = args.from ?? 'agent';
    // Checked first for a clear 404: the foreign key alone would say "conflict", and row-level security
    // already makes another tenant's ticket invisible here.
    const ticket = await ctx.db.selectFrom('tickets').select(['id', 'status']).where('id', '=', args.ticketId).forUpdate().executeTakeFirst();
    if (!ticket) throw new FwError('not_found', `No ticket ${args.ticketId}.`);
    if (from === 'agent' && ticket.status === 'closed') throw new FwError('conflict', `Ticket ${args.ticketId} is closed.`);
    const comment = await ctx.db
      .insertInto('comments')
      .values({ ticket_id: args.ticketId, body: args.body, author: ctx.auth.userId!, author_kind: from })
      .returningAll()
      .executeTakeFirstOrThrow();
    // A reply hands the ticket to the customer; their answer (even to a closed ticket) hands it back.
    const status = from === 'agent' ? 'pending' : 'open';
    await ctx.db.updateTable('tickets').set({ status, updated_at: sql<Date>`now()` }).where('id', '=', args.ticketId).execute();
    if (from === 'agent') {
      // Waits for the customer's answer, reminds them after a day and closes the ticket after three
      // (src/workflows/awaitCustomer.ts). Keyed by the reply: a retried command starts no second run.
      await ctx.startWorkflow('awaitCustomer', { ticketId: args.ticketId, replyId: comment.id }, { idempotencyKey: comment.id });
    } else {
      // Wakes the ticket's waiting awaitCustomer runs (only this tenant's runs can hear it).
      ctx.signal('ticket.customerReplied', { ticketId: args.ticketId });
    }
    return comment;
  },
});
