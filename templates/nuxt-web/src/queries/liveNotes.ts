import { liveQuery } from 'fwjs';

export default liveQuery({
  description: 'The caller’s tenant’s notes, newest first, kept up to date.',
  policy: 'user',
  handler: (ctx) => ctx.db.selectFrom('notes').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute(),
});
