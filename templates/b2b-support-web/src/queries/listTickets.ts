import { query, z } from 'fwjs';
import { ticketStatuses } from '../fw/schema.ts';

export default query({
  description: 'The caller’s tenant’s tickets, newest first, optionally with one status.',
  policy: 'agent',
  args: { status: z.enum(ticketStatuses).optional() },
  // Row-level security limits this to the caller's tenant; no tenant filter needed.
  handler: (ctx, args) => {
    let tickets = ctx.db.selectFrom('tickets').selectAll();
    if (args.status) tickets = tickets.where('status', '=', args.status);
    return tickets.orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  },
});
