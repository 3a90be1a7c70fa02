import { liveQuery, paginate, paginationArgs, z } from 'fwjs';
import { ticketPriorities } from '../fw/schema.ts';

export default liveQuery({
  description: 'The caller’s tenant’s active (open and pending) or closed tickets, newest first, a page at a time, kept up to date; narrowed by status, priority and words in the subject or description.',
  policy: 'agent',
  args: {
    view: z.enum(['active', 'closed']),
    /** Within the active view: only open ones (the team's turn) or only pending ones (the customer's). */
    status: z.enum(['open', 'pending']).optional(),
    priority: z.enum(ticketPriorities).optional(),
    /** Words to find in the subject or the description (case-insensitive). */
    search: z.string().trim().max(200).optional(),
    page: paginationArgs,
  },
  // Row-level security limits this to the caller's tenant; no tenant filter needed. Every loaded page
  // stays live, and a ticket opened while the list is on screen joins the first page (docs/live.md).
  handler: (ctx, args) => {
    let tickets = ctx.db.selectFrom('tickets').selectAll();
    tickets = args.view === 'closed' ? tickets.where('status', '=', 'closed') : tickets.where('status', 'in', args.status ? [args.status] : ['open', 'pending']);
    if (args.priority) tickets = tickets.where('priority', '=', args.priority);
    if (args.search) {
      // The words as typed, not as a pattern: % and _ match themselves.
      const pattern = `%${args.search.replace(/[\\%_]/g, '\\$&')}%`;
      tickets = tickets.where((eb) => eb.or([eb('subject', 'ilike', pattern), eb('body', 'ilike', pattern)]));
    }
    return paginate(tickets, { orderBy: [['created_at', 'desc'], ['id', 'desc']] }, args); // a total order: the last column is unique
  },
});
