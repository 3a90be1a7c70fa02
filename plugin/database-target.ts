import path from 'node:path';
import { createDatabase, type FwDatabase } from '../runtime/db/database.ts';
import { ensureSystemTables } from '../runtime/db/migrate.ts';

export interface DatabaseTarget {
  /** PostgreSQL URL; defaults to `DATABASE_URL`. Without one, PGlite under `<root>/.fw/db`. */
  databaseUrl?: string;
}

/** Opens an app's database: `DATABASE_URL` (PostgreSQL) or embedded PGlite in `.fw/db`. */
export async function openAppDatabase(root: string, target: DatabaseTarget = {}): Promise<FwDatabase> {
  const url = target.databaseUrl ?? process.env.DATABASE_URL;
  const db = await createDatabase(url ? { url } : { dataDir: path.join(root, '.fw', 'db') });
  try {
    await ensureSystemTables(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
