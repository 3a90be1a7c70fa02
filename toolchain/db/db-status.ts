import path from 'node:path';
import type { Diagnostic } from '../../runtime/core/errors.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { type AppliedMigration, migrationStatus, type PlannedChange } from '../../runtime/db/migrate.ts';
import { openAppDatabase } from '../../plugin/database-target.ts';
import { loadAppOnce } from '../../plugin/load-app-once.ts';
import { fetchAdmin, resolveRuntimeUrl } from '../admin/admin-client.ts';
import { readRuntimeFile } from '../dev/runtime-file.ts';

export interface DbStatus {
  applied: AppliedMigration[];
  pending: PlannedChange[];
  blocked: Diagnostic[];
  /** The running fw dev that answered, when it holds the embedded database; absent when read directly. */
  via?: string;
}

/**
 * `fw db status`: the applied and pending migrations. It reads the database itself; when the embedded
 * database is locked by this app's running `fw dev` (PGlite admits one process), it asks that process
 * over HTTP (`/_fw/db/status`) instead, so it works beside the dev server.
 */
export async function readDbStatus(rootDir: string): Promise<DbStatus> {
  const root = path.resolve(rootDir);
  let db;
  try {
    db = await openAppDatabase(root);
  } catch (error) {
    if (error instanceof FwFailure && error.kind === 'database_locked' && readRuntimeFile(root)) {
      const { applied, pending, blocked } = (await fetchAdmin({ root }, '/_fw/db/status')) as DbStatus;
      return { applied, pending, blocked, via: resolveRuntimeUrl({ root }) };
    }
    throw error;
  }
  try {
    // The app is loaded only for a database read here: the running fw dev above has its own.
    return await migrationStatus(db, (await loadAppOnce(root)).schema);
  } finally {
    await db.close();
  }
}
