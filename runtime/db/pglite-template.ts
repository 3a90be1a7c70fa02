/**
 * A new embedded database starts from a copy of one initialised before. PGlite's first start runs
 * PostgreSQL's initdb, about 3 s of CPU; loading an initialised data directory from a tarball takes
 * about 0.4 s. So fw initialises PGlite once per PGlite version, keeps that data directory (gzipped,
 * ~4.5 MB) in its cache (`FW_CACHE_DIR`), and starts every later fresh database — `memory://` ones
 * (tests, `fwjs/testing`, `fw verify`) and a first `fw dev` in an app without `.fw/db` — by loading
 * it. The template is taken before fw writes anything, so it holds no secret and no app state; a
 * database that exists already opens as it is. A cache that cannot be read or written costs only the
 * first start's time, never an error.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';
import type { PGlite, PGliteOptions } from '@electric-sql/pglite';
import { resolveConfig } from '../config/resolve-config.ts';

/** Templates read in this process, by file: a suite creates many databases. */
const loaded = new Map<string, Promise<Blob | undefined>>();

/** Opens PGlite at `dataDir`; a fresh one from the template when there is one (and makes it when not). */
export async function openPglite(dataDir: string, options: PGliteOptions): Promise<PGlite> {
  const { PGlite } = await import('@electric-sql/pglite');
  const fresh = dataDir.includes('://') ? dataDir.startsWith('memory://') : !existsSync(path.join(dataDir, 'PG_VERSION'));
  const file = fresh ? templateFile() : undefined;
  if (!file) return PGlite.create(dataDir, options);
  let pending = loaded.get(file);
  if (!pending) loaded.set(file, (pending = readTemplate(file)));
  const template = await pending;
  if (template) {
    try {
      return await PGlite.create(dataDir, { ...options, loadDataDir: template });
    } catch {
      // A damaged template: forgotten, and made again below.
      loaded.delete(file);
      await rm(file, { force: true }).catch(() => undefined);
      if (!dataDir.includes('://')) await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
    }
  }
  const pglite = await PGlite.create(dataDir, options);
  await saveTemplate(pglite, file);
  return pglite;
}

/** The template's file for this PGlite, or undefined when caching is off. */
function templateFile(): string | undefined {
  const config = resolveConfig();
  const chosen = config.given('FW_CACHE_DIR');
  if (chosen === 'off') return undefined;
  const dir = chosen ?? path.join(config.appVariable('XDG_CACHE_HOME') || path.join(homedir(), '.cache'), 'fwjs');
  return path.join(dir, `pglite-${pgliteVersion()}.tar.gz`);
}

function pgliteVersion(): string {
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

/** Keeps `pglite`'s data directory as the template (written whole, then renamed: a reader never sees half). */
async function saveTemplate(pglite: PGlite, file: string): Promise<void> {
  try {
    const dump = await pglite.dumpDataDir('gzip');
    await mkdir(path.dirname(file), { recursive: true });
    const partial = `${file}.${process.pid}.${Date.now()}.partial`;
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
    await rename(partial, file);
    loaded.set(file, Promise.resolve(dump));
  } catch {
    // No cache this time: the next fresh database initialises PGlite too.
  }
}
