/**
 * A new embedded database starts from a copy of one initialised before. PGlite's first start runs
 * PostgreSQL's initdb, about 3 s of CPU; loading an initialised data directory from a tarball takes
 * about 0.4 s. So fw initialises PGlite once per PGlite version, keeps that data directory (gzipped,
 * ~4.5 MB) in its cache (`FW_CACHE_DIR`), and starts every later fresh database — `memory://` ones
 * (tests, `fwjs/testing`, `fw verify`) and a first `fw dev` in an app without `.fw/db` — by loading
 * it. The template is taken before fw writes anything, so it holds no secret and no app state; a
 * database that exists already opens as it is. A cache that cannot be read or written costs only the
 * first start's time, never an error.
 *
 * One step further, for throwaway databases of an app (its tests, `fw verify`): a snapshot of the
 * database fw set up and migrated to the app's schema, named by that schema (memory-database.ts), so
 * the next one skips fw's set-up and the migration too.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';
import type { PGlite, PGliteOptions } from '@electric-sql/pglite';
import { resolveConfig } from '../config/resolve-config.ts';

/** Templates read in this process, by file: a suite creates many databases. */
const loaded = new Map<string, Promise<Blob | undefined>>();

/** Opens PGlite at `dataDir`; a fresh one from the template when there is one (and makes it when not). */
export async function openPglite(dataDir: string, options: PGliteOptions): Promise<PGlite> {
  return (await openPgliteFrom(dataDir, options)).pglite;
}

/**
 * As `openPglite`, but a fresh database starts from the snapshot named `snapshot` when fw keeps one
 * (`fromSnapshot` says so): a state fw migrated before, kept by `saveSnapshot`.
 */
export async function openPgliteFrom(dataDir: string, options: PGliteOptions, snapshot?: string): Promise<{ pglite: PGlite; fromSnapshot: boolean }> {
  const { PGlite } = await import('@electric-sql/pglite');
  const fresh = dataDir.includes('://') ? dataDir.startsWith('memory://') : !existsSync(path.join(dataDir, 'PG_VERSION'));
  if (fresh && snapshot) {
    const file = cacheFile(`snapshot-${snapshot}`);
    const kept = file && existsSync(file) ? await readTemplate(file) : undefined;
    if (kept) {
      try {
        const pglite = await PGlite.create(dataDir, { ...options, loadDataDir: kept });
        // Used last now: pruning keeps the snapshots in use.
        await utimes(file!, new Date(), new Date()).catch(() => undefined);
        return { pglite, fromSnapshot: true };
      } catch {
        await rm(file!, { force: true }).catch(() => undefined);
        if (!dataDir.includes('://')) await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
      }
    }
  }
  const file = fresh ? cacheFile('template') : undefined;
  if (!file) return { pglite: await PGlite.create(dataDir, options), fromSnapshot: false };
  let pending = loaded.get(file);
  if (!pending) loaded.set(file, (pending = readTemplate(file)));
  const template = await pending;
  if (template) {
    try {
      return { pglite: await PGlite.create(dataDir, { ...options, loadDataDir: template }), fromSnapshot: false };
    } catch {
      // A damaged template: forgotten, and made again below.
      loaded.delete(file);
      await rm(file, { force: true }).catch(() => undefined);
      if (!dataDir.includes('://')) await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
    }
  }
  const pglite = await PGlite.create(dataDir, options);
  await saveTemplate(pglite, file);
  return { pglite, fromSnapshot: false };
}

/**
 * Keeps `pglite`'s data directory as the snapshot `snapshot`, for `openPgliteFrom`; the least recently
 * used beyond the newest few are removed, so a schema edited many times does not fill the cache.
 */
export async function saveSnapshot(pglite: PGlite, snapshot: string): Promise<void> {
  const file = cacheFile(`snapshot-${snapshot}`);
  if (!file) return;
  await writeDump(pglite, file);
  try {
    const dir = path.dirname(file);
    const prefix = `pglite-${pgliteVersion()}-snapshot-`;
    const kept = await Promise.all(
      (await readdir(dir)).filter((name) => name.startsWith(prefix) && name.endsWith('.tar.gz')).map(async (name) => ({ name, used: (await stat(path.join(dir, name))).mtimeMs })),
    );
    kept.sort((a, b) => b.used - a.used);
    for (const { name } of kept.slice(KEPT_SNAPSHOTS)) await rm(path.join(dir, name), { force: true });
  } catch {
    // Pruning is housekeeping: a cache that cannot be listed keeps what it has.
  }
}

/** Removes the snapshot `snapshot` (it did not hold what its name promised). */
export async function forgetSnapshot(snapshot: string): Promise<void> {
  const file = cacheFile(`snapshot-${snapshot}`);
  if (file) await rm(file, { force: true }).catch(() => undefined);
}

/** Snapshots kept: one per app schema in use (an app's tests, fw verify), the newest few. */
const KEPT_SNAPSHOTS = 8;

/** The cache's file for this PGlite's `what` (its template, a snapshot), or undefined when caching is off. */
function cacheFile(what: string): string | undefined {
  const config = resolveConfig();
  const chosen = config.given('FW_CACHE_DIR');
  if (chosen === 'off') return undefined;
  const dir = chosen ?? path.join(config.appVariable('XDG_CACHE_HOME') || path.join(homedir(), '.cache'), 'fwjs');
  return path.join(dir, what === 'template' ? `pglite-${pgliteVersion()}.tar.gz` : `pglite-${pgliteVersion()}-${what}.tar.gz`);
}

export function pgliteVersion(): string {
  const require = createRequire(import.meta.url);
  const main = require.resolve('@electric-sql/pglite');
  // The package root: the nearest package.json above its entry point named @electric-sql/pglite.
  for (let dir = path.dirname(main); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = require(file) as { name?: string; version?: string };
    if (pkg.name === '@electric-sql/pglite' && pkg.version) return pkg.version;
  }
  return 'unknown';
}

async function readTemplate(file: string): Promise<Blob | undefined> {
  try {
    return new Blob([await readFile(file)]);
  } catch {
    return undefined;
  }
}

/** Keeps `pglite`'s data directory as the template. */
async function saveTemplate(pglite: PGlite, file: string): Promise<void> {
  const dump = await writeDump(pglite, file);
  if (dump) loaded.set(file, Promise.resolve(dump));
}

/** Writes `pglite`'s data directory to `file`, whole then renamed (a reader never sees half); undefined when it could not. */
async function writeDump(pglite: PGlite, file: string): Promise<Blob | undefined> {
  try {
    const dump = await pglite.dumpDataDir('gzip');
    await mkdir(path.dirname(file), { recursive: true });
    const partial = `${file}.${process.pid}.${Date.now()}.partial`;
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
    await rename(partial, file);
    return dump;
  } catch {
    // No cache this time: the next fresh database initialises PGlite (or migrates) again.
    return undefined;
  }
}
