import { command, FwError, z } from 'fwjs';

export default command({
  description: 'Delete one of the caller’s own notes.',
  policy: 'user',
  args: { id: z.uuid() },
  handler: async (ctx, args) => {
    // Row-level security already hides another tenant's notes: those are "not found" here too.
    const note = await ctx.db.selectFrom('notes').select(['id', 'author_id']).where('id', '=', args.id).forUpdate().executeTakeFirst();
    if (!note) throw new FwError('not_found', 'This note no longer exists.');
    if (note.author_id !== ctx.auth.userId) throw new FwError('forbidden', 'Only the author of a note can delete it.');
    await ctx.db.deleteFrom('notes').where('id', '=', args.id).execute();
    return { id: args.id };
  },
});
