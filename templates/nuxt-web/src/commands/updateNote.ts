import { command, FwError, z } from 'fwjs';

export default command({
  description: 'Change the title and details of one of the caller’s own notes.',
  policy: 'user',
  args: {
    id: z.uuid(),
    title: z.string().trim().min(1).max(200),
    /** The details; empty or left out clears them. */
    body: z.string().max(10_000).optional(),
  },
  handler: async (ctx, args) => {
    // Row-level security already hides another tenant's notes: those are "not found" here too.
    const note = await ctx.db.selectFrom('notes').select(['id', 'author_id']).where('id', '=', args.id).forUpdate().executeTakeFirst();
    if (!note) throw new FwError('not_found', 'This note no longer exists.');
    if (note.author_id !== ctx.auth.userId) throw new FwError('forbidden', 'Only the author of a note can edit it.');
    return ctx.db
      .updateTable('notes')
      .set({ title: args.title, body: args.body?.trim() ? args.body : null })
      .where('id', '=', args.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },
});
