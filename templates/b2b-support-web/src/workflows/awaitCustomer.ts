import { sql, workflow, type WorkflowContext, z } from 'fwjs';

// Started by addComment for every reply to a customer. The run waits — durably: it holds no worker,
// connection or timer, and survives restarts and deploys (docs/workflows.md) — for the customer's
// answer (addComment sends `ticket.customerReplied`), reminds them after a day, and closes the ticket
// if they are still silent two days later. Each side effect is a step, stored once it is done.
export default workflow({
  description: 'After a reply: wait for the customer, remind them after a day, close after three.',
  args: { ticketId: z.uuid(), replyId: z.uuid() },
  handler: async (ctx, args) => {
    // A signal sent before the run waits is not kept for it (an answer logged right after the reply):
    // look first, so such a run ends now instead of waking in a day to find nothing to do.
    if (!(await ctx.step('still waiting', () => stillWaiting(ctx, args)))) return 'moved on';
    const answer = { match: { ticketId: args.ticketId } };
    if ((await ctx.waitForEvent('answer', 'ticket.customerReplied', { ...answer, timeout: '1d' })).ok) return 'answered';
    const reminded = await ctx.step('remind', async () => (await stillWaiting(ctx, args)) && note(ctx, args.ticketId, 'No answer for a day: the customer was reminded.'));
    if (!reminded) return 'moved on';
    if ((await ctx.waitForEvent('answer after reminder', 'ticket.customerReplied', { ...answer, timeout: '2d' })).ok) return 'answered';
    const closed = await ctx.step('close', async () => {
      if (!(await stillWaiting(ctx, args))) return false;
      await ctx.db.updateTable('tickets').set({ status: 'closed', updated_at: sql<Date>`now()` }).where('id', '=', args.ticketId).where('status', '=', 'pending').execute();
      return note(ctx, args.ticketId, 'Closed after three days without an answer.');
    });
    return closed ? 'closed' : 'moved on';
  },
});

/** The ticket still waits on this reply: pending, and no later comment (a later reply has a run of its own). */
async function stillWaiting(ctx: WorkflowContext, args: { ticketId: string; replyId: string }): Promise<boolean> {
  const latest = await ctx.db.selectFrom('comments').select('id').where('ticket_id', '=', args.ticketId).where('author_kind', '!=', 'system').orderBy('created_at', 'desc').orderBy('id', 'desc').executeTakeFirst();
  const ticket = await ctx.db.selectFrom('tickets').select('status').where('id', '=', args.ticketId).executeTakeFirst();
  return ticket?.status === 'pending' && latest?.id === args.replyId;
}

async function note(ctx: WorkflowContext, ticketId: string, body: string): Promise<true> {
  await ctx.db.insertInto('comments').values({ ticket_id: ticketId, body, author: 'support desk', author_kind: 'system' }).execute();
  return true;
}
