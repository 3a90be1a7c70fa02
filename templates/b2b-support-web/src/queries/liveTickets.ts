import { liveQuery } from 'fwjs';

export default liveQuery({
  description: 'The caller’s tenant’s open and pending tickets, newest first, kept up to date.',
  policy: 'agent',
  handler: (ctx) =>
    ctx.db
      .selectFrom('tickets')
      .selectAll()
      .where('status', 'in', ['open', 'pending'])
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute(),
});
