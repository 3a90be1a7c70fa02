import { liveQuery, paginate, paginationArgs, z } from 'fwjs';

export default liveQuery({
  description: 'The caller’s tenant’s notes, newest first, a page at a time, kept up to date; narrowed to those with the given words in the title or details. Each says whether it is the caller’s own (`mine`: only its author may edit or delete it).',
  policy: 'user',
  args: {
    /** Words to find in the title or the details (case-insensitive). */
    search: z.string().trim().max(200).optional(),
    page: paginationArgs,
  },
  // Row-level security limits this to the caller's tenant; no tenant filter needed. Every loaded page
  // stays live: a note added, edited or deleted anywhere shows in the page it belongs to (docs/live.md).
  handler: async (ctx, args) => {
    let notes = ctx.db.selectFrom('notes').selectAll();
    if (args.search) {
      // The words as typed, not as a pattern: % and _ match themselves.
      const pattern = `%${args.search.replace(/[\\%_]/g, '\\$&')}%`;
      notes = notes.where((eb) => eb.or([eb('title', 'ilike', pattern), eb('body', 'ilike', pattern)]));
    }
    const result = await paginate(notes, { orderBy: [['created_at', 'desc'], ['id', 'desc']] }, args); // a total order: the last column is unique
    return { ...result, page: result.page.map((note) => ({ ...note, mine: note.author_id === ctx.auth.userId })) };
  },
});
