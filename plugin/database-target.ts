import path from 'node:path';
import { createDatabase, type FwDatabase } from '../runtime/db/database.ts';
import { ensureSystemTables } from '../runtime/db/migrate.ts';
import { resolveConfig } from '../runtime/config/resolve-config.ts';

export interface DatabaseTarget {
  /** PostgreSQL URL; defaults to `DATABASE_URL`. Without one, PGlite under `<root>/.fw/db`. */
  databaseUrl?: string;
  /**
   * The direct URL beside a pooled `databaseUrl` (LISTEN, migrations); defaults to
   * `FW_DIRECT_DATABASE_URL` when the URL itself comes from `DATABASE_URL`.
   */
  directDatabaseUrl?: string;
}

/** Opens an app's database: `DATABASE_URL` (PostgreSQL; `FW_DIRECT_DATABASE_URL` beside a pooler) or embedded PGlite in `.fw/db`. */
export async function openAppDatabase(root: string, target: DatabaseTarget = {}): Promise<FwDatabase> {
  const config = resolveConfig();
  const url = target.databaseUrl ?? config.get('DATABASE_URL');
  const directUrl = target.directDatabaseUrl ?? (target.databaseUrl === undefined ? config.get('FW_DIRECT_DATABASE_URL') : undefined);
  const db = await createDatabase(url || directUrl ? { url, ...(directUrl ? { directUrl } : {}) } : { dataDir: path.join(root, '.fw', 'db') });
  try {
    await ensureSystemTables(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
