import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import type { FwDatabase } from '../db/database.ts';
import { loadTextSemantics, textSemanticsOf } from './text-semantics.ts';

describe('what fw may assume of text, by collation and character classes', () => {
  it.each([
    ['libc C', ['c', 'C', 'C', undefined], { order: 'bytes', lower: 'all' }],
    ['libc POSIX', ['c', 'POSIX', 'POSIX', undefined], { order: 'bytes', lower: 'all' }],
    ['libc C.UTF-8 (ASCII only)', ['c', 'C.UTF-8', 'C.UTF-8', undefined], { order: 'ascii', lower: 'ascii' }],
    ['PGlite: collation C, character classes C.UTF-8', ['c', 'C', 'C.UTF-8', undefined], { order: 'bytes', lower: 'ascii' }],
    ['libc en_US.UTF-8', ['c', 'en_US.UTF-8', 'en_US.UTF-8', undefined], { order: 'none', lower: 'none' }],
    ['ICU', ['i', 'und-x-icu', 'und-x-icu', 'und'], { order: 'none', lower: 'none' }],
    ['builtin C.UTF-8', ['b', 'C', 'C', 'C.UTF-8'], { order: 'bytes', lower: 'ascii' }],
    ['builtin C', ['b', 'C', 'C', 'C'], { order: 'bytes', lower: 'all' }],
    ['no provider column (before PostgreSQL 15)', [undefined, 'C', 'C', undefined], { order: 'bytes', lower: 'all' }],
  ] as const)('%s', (_name, [provider, collate, ctype, locale], expected) => {
    expect(textSemanticsOf(provider, collate, ctype, locale)).toEqual(expected);
  });
});

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`reading the text semantics of a database (${target.name})`, () => {
    let db: FwDatabase;
    let drop = async () => {};
    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
    });
    afterAll(async () => {
      await db?.close();
      await drop();
    });

    it('reads the database default and the columns with a collation of their own', async () => {
      await sql`create table texts (a text, b text collate "C", c integer)`.execute(db.admin);
      const [row] = (await sql<{ datcollate: string; datctype: string }>`select datcollate, datctype from pg_database where datname = current_database()`.execute(db.admin)).rows;
      const semantics = await loadTextSemantics(db);
      expect({ order: semantics.order, lower: semantics.lower }).toEqual(textSemanticsOf('c', row!.datcollate, row!.datctype, undefined));
      expect([...semantics.ownCollation]).toEqual(['texts.b']);
    });
  });
}
