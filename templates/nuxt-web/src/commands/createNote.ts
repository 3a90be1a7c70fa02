import { command, z } from 'fwjs';

export default command({
  description: 'Create a note in the caller’s tenant.',
  policy: 'user',
  args: {
    title: z.string().trim().min(1).max(200),
    body: z.string().max(10_000).optional(),
  },
  handler: (ctx, args) =>
    ctx.db
      .insertInto('notes')
      .values({ title: args.title, body: args.body ?? null, author_id: ctx.auth.userId! })
      .returningAll()
      .executeTakeFirstOrThrow(),
});
