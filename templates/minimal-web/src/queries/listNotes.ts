import { query } from 'fwjs';

export default query({
  description: 'The caller’s tenant’s notes, newest first.',
  policy: 'user',
  // Row-level security limits this to the caller's tenant; no tenant filter needed.
  handler: (ctx) => ctx.db.selectFrom('notes').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute(),
});
