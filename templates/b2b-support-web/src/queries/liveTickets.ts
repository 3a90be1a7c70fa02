import { liveQuery, paginate, paginationArgs, z } from 'fwjs';

export default liveQuery({
  description: 'The caller’s tenant’s active (open and pending) or closed tickets, newest first, a page at a time, kept up to date.',
  policy: 'agent',
  args: { view: z.enum(['active', 'closed']), page: paginationArgs },
  // Row-level security limits this to the caller's tenant; no tenant filter needed. Every loaded page
  // stays live, and a ticket opened while the list is on screen joins the first page (docs/live.md).
  handler: (ctx, args) => {
    const tickets = ctx.db.selectFrom('tickets').selectAll();
    return paginate(
      args.view === 'active' ? tickets.where('status', 'in', ['open', 'pending']) : tickets.where('status', '=', 'closed'),
      { orderBy: [['created_at', 'desc'], ['id', 'desc']] }, // a total order: the last column is unique
      args,
    );
  },
});
