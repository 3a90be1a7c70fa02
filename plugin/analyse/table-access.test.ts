import { describe, expect, it } from 'vitest';
import { summarizeAccess } from './entry-access.ts';
import { findTableAccess } from './table-access.ts';

const file = 'src/queries/fixture.ts';

/** The access summary of a handler body, wrapped in an entry file like the ones apps write. */
function access(body: string, imports = '') {
  const source = `import { query, sql } from 'fwjs';\n${imports}\nexport default query({\n  handler: async (ctx, args) => {\n${body}\n  },\n});\n`;
  return summarizeAccess(file, findTableAccess(file, source));
}

describe('table access of Kysely calls', () => {
  it('selectFrom reads its table', () => {
    expect(access("return ctx.db.selectFrom('notes').selectAll().execute();")).toEqual({ kind: 'complete', reads: ['notes'], writes: [] });
  });

  it('insertInto writes its table without reading it, even with returning', () => {
    expect(access("return ctx.db.insertInto('notes').values({ title: 'x' }).returning(['id', 'title']).executeTakeFirstOrThrow();")).toEqual({
      kind: 'complete',
      reads: [],
      writes: ['notes'],
    });
  });

  it('updateTable, deleteFrom and mergeInto read and write their target', () => {
    expect(access("await ctx.db.updateTable('notes').set({ title: 'y' }).where('id', '=', args.id).execute();")).toEqual({
      kind: 'complete',
      reads: ['notes'],
      writes: ['notes'],
    });
    expect(access("await ctx.db.deleteFrom('drafts').execute();")).toEqual({ kind: 'complete', reads: ['drafts'], writes: ['drafts'] });
    expect(
      access("await ctx.db.mergeInto('notes as n').using('drafts as d', 'd.id', 'n.id').whenMatched().thenDelete().execute();"),
    ).toEqual({ kind: 'complete', reads: ['drafts', 'notes'], writes: ['notes'] });
  });

  it('joins read their tables, in every join form', () => {
    const body = [
      "return ctx.db.selectFrom('notes as n')",
      "  .innerJoin('users as u', 'u.id', 'n.author_id')",
      "  .leftJoin('tags', 'tags.note_id', 'n.id')",
      "  .rightJoin('teams', 'teams.id', 'u.team_id')",
      "  .fullJoin('labels', 'labels.id', 'tags.label_id')",
      "  .crossJoin('settings')",
      "  .leftJoinLateral((eb) => eb.selectFrom('comments').selectAll().as('c'), (join) => join.onTrue())",
      '  .selectAll().execute();',
    ].join('\n');
    expect(access(body)).toEqual({ kind: 'complete', reads: ['comments', 'labels', 'notes', 'settings', 'tags', 'teams', 'users'], writes: [] });
  });

  it('takes the table out of aliases, schema-qualified names, template literals and arrays', () => {
    expect(access("return ctx.db.selectFrom(['public.notes as n', `users`]).selectAll().execute();")).toEqual({
      kind: 'complete',
      reads: ['notes', 'users'],
      writes: [],
    });
  });

  it('follows subqueries given as callbacks or .as() and counts what they read', () => {
    const body = "const recent = ctx.db.selectFrom('notes').selectAll().limit(5).as('recent');\nreturn ctx.db.selectFrom(recent).selectAll().execute();";
    expect(access(body)).toEqual({ kind: 'complete', reads: ['notes'], writes: [] });
  });

  it('does not count CTE names as tables (plain, recursive and builder forms)', () => {
    const body = [
      "return ctx.db.with('recent', (db) => db.selectFrom('notes').selectAll())",
      "  .withRecursive('tree(id, parent_id)', (db) => db.selectFrom('folders').select(['id', 'parent_id']))",
      "  .with((cte) => cte('pinned').materialized(), (db) => db.selectFrom('pins').selectAll())",
      "  .selectFrom('recent').innerJoin('tree', 'tree.id', 'recent.folder_id').innerJoin('pinned', 'pinned.id', 'recent.id')",
      '  .selectAll().execute();',
    ].join('\n');
    expect(access(body)).toEqual({ kind: 'complete', reads: ['folders', 'notes', 'pins'], writes: [] });
  });

  it('counts from() only after updateTable and using() only after deleteFrom/mergeInto', () => {
    const body = [
      "await ctx.db.updateTable('notes').from('users').set({ title: 'x' }).execute();",
      "await ctx.db.deleteFrom('tags').using('labels').execute();",
      "const bytes = Buffer.from('not a table');",
      "const list = Array.from('abc');",
      "const thing = someLib.using('also not a table');",
    ].join('\n');
    expect(access(body)).toEqual({ kind: 'complete', reads: ['labels', 'notes', 'tags', 'users'], writes: ['notes', 'tags'] });
  });

  it('ignores Object.prototype method names and other methods', () => {
    expect(access("const a = x.constructor('notes'); const b = x.hasOwnProperty('notes'); return [1, 2].with(0, 3);")).toEqual({
      kind: 'complete',
      reads: [],
      writes: [],
    });
  });

  it('follows a const declared once in the file to its value', () => {
    const body = "const table = 'notes as n';\nconst target = 'archive';\nawait ctx.db.insertInto(target).values({}).execute();\nreturn ctx.db.selectFrom(table).selectAll().execute();";
    expect(access(body)).toEqual({ kind: 'complete', reads: ['notes'], writes: ['archive'] });
    const shadowed = "const table = 'notes';\nif (args.x) { const table = 'archive'; }\nreturn ctx.db.selectFrom(table).selectAll().execute();";
    expect(access(shadowed)).toMatchObject({ kind: 'partial', unresolved: [{ kind: 'dynamic-table', at: `${file}:7:26` }] });
  });

  it('marks a dynamic table name as unresolved, with its file:line:column', () => {
    const result = access("  const table = args.archived ? 'archive' : 'notes';\n  return ctx.db.selectFrom(table).selectAll().execute();");
    // Line 1 is the import, 2 the blank imports line, 3 `export default`, 4 `handler`, 5 the const.
    expect(result).toEqual({ kind: 'partial', reads: [], writes: [], unresolved: [{ kind: 'dynamic-table', call: 'selectFrom', at: `${file}:6:28` }] });
    expect(access('return ctx.db.insertInto(`notes_${args.year}`).values({}).execute();')).toMatchObject({
      kind: 'partial',
      unresolved: [{ kind: 'dynamic-table', call: 'insertInto' }],
    });
  });

  it('marks raw SQL that is executed as unresolved', () => {
    expect(access('return sql`select * from notes`.execute(ctx.db);')).toEqual({
      kind: 'partial',
      reads: [],
      writes: [],
      unresolved: [{ kind: 'raw-sql', at: `${file}:5:8` }],
    });
  });

  it('marks handing ctx or ctx.db to an imported helper as unresolved, but not other calls', () => {
    const imports = "import { listFor, slugify } from '../lib/notes.ts';";
    expect(access('return listFor(ctx.db, args);', imports)).toMatchObject({
      kind: 'partial',
      unresolved: [{ kind: 'helper-call', callee: 'listFor', source: '../lib/notes.ts', at: `${file}:5:8` }],
    });
    expect(access('return listFor(ctx);', imports)).toMatchObject({ kind: 'partial' });
    expect(access("return ctx.db.selectFrom('notes').where('slug', '=', slugify(args.title)).selectAll().execute();", imports)).toEqual({
      kind: 'complete',
      reads: ['notes'],
      writes: [],
    });
    const destructured = "import { listFor } from '../lib/notes.ts';\nexport default query({ handler: ({ db }) => listFor(db) });\n";
    expect(summarizeAccess(file, findTableAccess(file, destructured))).toMatchObject({ kind: 'partial', unresolved: [{ callee: 'listFor' }] });
    const delegated = "import { query } from 'fwjs';\nimport { listNotes } from '../lib/handlers.ts';\nexport default query({ handler: listNotes });\n";
    expect(summarizeAccess(file, findTableAccess(file, delegated))).toMatchObject({
      kind: 'partial',
      unresolved: [{ kind: 'helper-call', callee: 'listNotes', at: `${file}:3:33` }],
    });
  });

  it('counts columns in UTF-16 code units, as editors do', () => {
    // UTF-8 byte offsets would put it at column 73 (’ and — are three bytes each).
    const source = "// Notes’ list\nexport default query({ handler: (ctx) => /* ’— */ ctx.db.selectFrom(name) });\n";
    expect(summarizeAccess(file, findTableAccess(file, source))).toMatchObject({ unresolved: [{ at: `${file}:2:69` }] });
  });

  it('reports a file it cannot parse as unresolved instead of throwing', () => {
    expect(summarizeAccess(file, findTableAccess(file, 'export default query({ handler: () => { return 1 +; } });\n'))).toMatchObject({
      kind: 'partial',
      unresolved: [{ kind: 'parse-error', at: expect.stringMatching(/^src\/queries\/fixture\.ts:1:\d+$/) }],
    });
  });
});
