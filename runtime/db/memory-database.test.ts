import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { useTemporaryCache } from '../../e2e/support/temporary-cache.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { createMemoryDatabase } from './memory-database.ts';

describe('a throwaway database migrated to an app schema starts from a snapshot of the first one', () => {
  const cacheDir = useTemporaryCache();
  const snapshots = async () => (await readdir(cacheDir())).filter((name) => /^pglite-.+-snapshot-[0-9a-f]+\.tar\.gz$/.test(name));
  const secrets = async (db: Awaited<ReturnType<typeof createMemoryDatabase>>['db']) =>
    (await sql<{ name: string; value: string }>`select name, encode(value, 'hex') as value from _fw.secrets order by name`.execute(db.admin)).rows;
  // A schema of this test's own: its snapshot is no other test's.
  const schema = defineSchema({ [`snap_${process.pid}_${Date.now()}`]: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text() }) });
  const tableName = Object.keys(schema.tables)[0]!;


  it('keeps the first migrated database, and the next starts from it with nothing to migrate and secrets of its own', async () => {
    const first = await createMemoryDatabase(schema);
    const firstSecrets = await secrets(first.db);
    expect(first.db.fromSnapshot).toBe(false);
    expect(first.migration.applied.length).toBeGreaterThan(0);
    await first.db.close();
    expect(await snapshots()).toHaveLength(1);

    const second = await createMemoryDatabase(schema);
    try {
      expect(second.db.fromSnapshot).toBe(true);
      expect(second.migration).toMatchObject({ applied: [], blocked: [], migrationId: null });
      // The same secrets by name, none by value: a snapshot's secrets (which sit in a file) are never used.
      const secondSecrets = await secrets(second.db);
      expect(secondSecrets.map((s) => s.name)).toEqual(firstSecrets.map((s) => s.name));
      for (const secret of secondSecrets) expect(firstSecrets.find((s) => s.name === secret.name)!.value).not.toBe(secret.value);
      // The app's table is there and a request writes and reads it under its identity.
      const auth = { kind: 'user' as const, userId: 'u1', tenantId: '00000000-0000-4000-8000-000000000001', role: null };
      const written = await second.db.transaction({ readOnly: false, auth }, (trx) => trx.insertInto(tableName).values({ title: 'kept' }).returning('title').execute());
      expect(written).toEqual([{ title: 'kept' }]);
    } finally {
      await second.db.close();
    }
  });

  it('drops a snapshot that does not hold the schema’s migrated state and makes the database from scratch', async () => {
    const [file] = await snapshots();
    // Under the schema's name, a database of other making (a marker table, no fw set-up at all).
    const other = await PGlite.create('memory://');
    await other.exec('create schema "_fw"; create table "_fw"."secrets" (name text primary key, value bytea); create table stray_marker (id int)');
    await writeFile(path.join(cacheDir(), file!), Buffer.from(await (await other.dumpDataDir('gzip')).arrayBuffer()));
    await other.close();

    const made = await createMemoryDatabase(schema);
    try {
      expect(made.db.fromSnapshot).toBe(false);
      expect((await sql<{ present: boolean }>`select to_regclass('stray_marker') is not null as present`.execute(made.db.admin)).rows).toEqual([{ present: false }]);
      expect((await sql<{ present: boolean }>`select to_regclass(${tableName}) is not null as present`.execute(made.db.admin)).rows).toEqual([{ present: true }]);
    } finally {
      await made.db.close();
    }
    // Made again from the database that was migrated from scratch.
    const again = await createMemoryDatabase(schema);
    expect(again.db.fromSnapshot).toBe(true);
    await again.db.close();
  });
});
