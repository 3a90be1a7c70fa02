import { query } from 'fwjs';

export default query({
  description: 'The caller’s tenant’s most recent nightly digest, or null before the first night.',
  policy: 'agent',
  handler: async (ctx) => (await ctx.db.selectFrom('digests').selectAll().orderBy('created_at', 'desc').limit(1).executeTakeFirst()) ?? null,
});
