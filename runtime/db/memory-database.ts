/**
 * A throwaway in-memory database migrated to an app's schema — what `fwjs/testing`, the suite and
 * `fw verify` run an app on. Setting fw up in a fresh PGlite and migrating it costs more CPU than
 * loading the result, and the result depends only on fw, PGlite and the schema: so the first one is
 * kept as a snapshot named by those (pglite-template.ts keeps it in fw's cache) and every later one
 * starts from it. Its secrets are replaced before use (database.ts), and a snapshot that does not hold
 * the schema's migrated state — fw changed what it sets up, say — is dropped and made again.
 */
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Schema } from '../core/schema.ts';
import { createDatabase, type DatabaseOptions, type FwDatabase } from './database.ts';
import { applyMigration, type MigrationResult } from './migrate.ts';
import { forgetSnapshot, pgliteVersion, saveSnapshot } from './pglite-template.ts';

/** A fresh `memory://` database migrated to `schema` (a refused migration is the caller's to report). */
export async function createMemoryDatabase(schema: Schema, options: Pick<DatabaseOptions, 'statementTimeoutMs'> = {}): Promise<{ db: FwDatabase; migration: MigrationResult }> {
  const snapshot = snapshotName(schema);
  const first = await migrated(await createDatabase({ ...options, dataDir: 'memory://', snapshot }), schema);
  if (!first.db.fromSnapshot) {
    if (first.migration.blocked.length === 0) await saveSnapshot(pgliteOf(first.db), snapshot);
    return first;
  }
  if (first.migration.applied.length === 0 && first.migration.blocked.length === 0) return first;
  await first.db.close();
  await forgetSnapshot(snapshot);
  const again = await migrated(await createDatabase({ ...options, dataDir: 'memory://' }), schema);
  if (again.migration.blocked.length === 0) await saveSnapshot(pgliteOf(again.db), snapshot);
  return again;
}

async function migrated(db: FwDatabase, schema: Schema): Promise<{ db: FwDatabase; migration: MigrationResult }> {
  try {
    return { db, migration: await applyMigration(db, schema) };
  } catch (error) {
    await db.close();
    throw error;
  }
}

function pgliteOf(db: FwDatabase) {
  if (db.driver.kind !== 'pglite') throw new Error('fw: a memory database is PGlite.');
  return db.driver.pglite;
}

/**
 * The schema's snapshot name: its definition, PGlite's version and this build of fw's database code
 * (the files beside this one, by name, size and time), so a changed fw or schema makes a new one.
 */
function snapshotName(schema: Schema): string {
  const hash = createHash('sha256').update(pgliteVersion()).update(fwDatabaseCode()).update(JSON.stringify(schema));
  return hash.digest('hex').slice(0, 24);
}

let code: string | undefined;
function fwDatabaseCode(): string {
  if (code !== undefined) return code;
  const dir = path.dirname(fileURLToPath(import.meta.url));
  try {
    code = readdirSync(dir)
      .sort()
      .map((name) => {
        const stats = statSync(path.join(dir, name));
        return `${name}:${stats.size}:${stats.mtimeMs}`;
      })
      .join('\n');
  } catch {
    code = '';
  }
  return code;
}
