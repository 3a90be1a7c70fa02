import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { describe, expect, it, vi } from 'vitest';
import { useTemporaryCache } from '../../e2e/support/temporary-cache.ts';
import { createDatabase } from './database.ts';

/** The module anew, as a new process would load it (it keeps the templates it read in memory). */
async function freshModule(): Promise<typeof import('./pglite-template.ts')> {
  vi.resetModules();
  return import('./pglite-template.ts');
}

describe('the embedded database starts from a template initialised once per PGlite version', () => {
  const cacheDir = useTemporaryCache();
  const templateIn = async (dir: string) => (await readdir(dir)).filter((name) => /^pglite-.+\.tar\.gz$/.test(name));


  it('keeps the first fresh database as the template — before fw writes anything: no secret, no fw schema', async () => {
    const db = await createDatabase({ dataDir: 'memory://' });
    await db.close();
    const [file] = await templateIn(cacheDir());
    expect(file).toMatch(/^pglite-\d+\.\d+\.\d+.*\.tar\.gz$/);
    const raw = await PGlite.create('memory://', { loadDataDir: new Blob([await import('node:fs').then((fs) => fs.readFileSync(path.join(cacheDir(), file!)))]) });
    try {
      expect((await raw.query<{ n: number }>("select count(*)::int as n from pg_namespace where nspname = '_fw'")).rows[0]!.n).toBe(0);
      expect((await raw.query<{ n: number }>("select count(*)::int as n from pg_roles where rolname = 'fw_app'")).rows[0]!.n).toBe(0);
    } finally {
      await raw.close();
    }
  });

  it('starts every later fresh database from it (a template with a marker table gives it to them), and an existing one as it is', async () => {
    // A template of our own making: its marker shows which data directory a new database was loaded from.
    const [file] = await templateIn(cacheDir());
    const marked = await PGlite.create('memory://');
    await marked.exec('create table template_marker (id int)');
    await writeFile(path.join(cacheDir(), file!), Buffer.from(await (await marked.dumpDataDir('gzip')).arrayBuffer()));
    await marked.close();
    // The template this process read before is kept in memory: a new process would read the file. Load it fresh.
    const { openPglite } = await freshModule();
    const fresh = (await openPglite('memory://', {})) as PGlite;
    expect((await fresh.query("select to_regclass('template_marker') is not null as present")).rows).toEqual([{ present: true }]);
    await fresh.close();

    const dir = await mkdtemp(path.join(tmpdir(), 'fw-db-'));
    try {
      const first = await createDatabase({ dataDir: path.join(dir, 'db') });
      await sql`create table kept (id int)`.execute(first.admin);
      await first.close();
      const again = await createDatabase({ dataDir: path.join(dir, 'db') });
      expect((await sql<{ present: boolean }>`select to_regclass('kept') is not null as present`.execute(again.admin)).rows).toEqual([{ present: true }]);
      await again.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a damaged template costs only time: the database starts, and a good template replaces it', async () => {
    const [file] = await templateIn(cacheDir());
    await writeFile(path.join(cacheDir(), file!), 'not a tarball');
    const { openPglite } = await freshModule();
    const pglite = (await openPglite('memory://', {})) as PGlite;
    expect((await pglite.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    await pglite.close();
    const again = await PGlite.create('memory://', { loadDataDir: new Blob([await import('node:fs').then((fs) => fs.readFileSync(path.join(cacheDir(), file!)))]) });
    expect((await again.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    await again.close();
  });

  it('its default place is $XDG_CACHE_HOME/fwjs; FW_CACHE_DIR=off keeps nothing', async () => {
    const home = await mkdtemp(path.join(tmpdir(), 'fw-xdg-'));
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = home;
    try {
      process.env.FW_CACHE_DIR = 'off';
      const off = await freshModule();
      await ((await off.openPglite('memory://', {})) as PGlite).close();
      expect(await readdir(home)).toEqual([]);
      delete process.env.FW_CACHE_DIR;
      const on = await freshModule();
      await ((await on.openPglite('memory://', {})) as PGlite).close();
      expect(await templateIn(path.join(home, 'fwjs'))).toHaveLength(1);
    } finally {
      process.env.FW_CACHE_DIR = cacheDir();
      if (saved === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = saved;
      await rm(home, { recursive: true, force: true });
    }
  });
});
