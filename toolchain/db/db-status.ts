import path from 'node:path';
import { type AppliedMigration, migrationStatus, type PlannedChange } from '../../runtime/db/migrate.ts';
import { type LocatedDiagnostic, locateSchemaDiagnostics } from '../../plugin/schema-locations.ts';
import { withAppDatabase } from './app-database.ts';

export interface DbStatus {
  applied: AppliedMigration[];
  pending: PlannedChange[];
  /** Changes fw will not apply by itself: why (`message`), the fix (`hint`), and the schema file's line. */
  blocked: LocatedDiagnostic[];
  /** The running fw dev that answered, when it holds the embedded database; absent when read directly. */
  via?: string;
  /** Answered by fw dev: it serves no entry (schema_blocked) until the blocked changes are resolved. */
  held?: boolean;
}

/**
 * `fw db status`: the applied and pending migrations. It reads the database itself; when the embedded
 * database is locked by this app's running `fw dev` (PGlite admits one process), it asks that process
 * over HTTP (`/_fw/db/status`) instead, so it works beside the dev server — compared with the schema
 * as fw dev last loaded it, which is the one on disk.
 */
export async function readDbStatus(rootDir: string): Promise<DbStatus> {
  const root = path.resolve(rootDir);
  const answer = await withAppDatabase(root, {
    direct: async (app, db) => {
      const status = await migrationStatus(db, app.schema);
      return { ...status, blocked: locateSchemaDiagnostics(root, status.blocked) };
    },
    viaDev: (ask) => ask('/_fw/db/status', 'GET'),
  });
  if ('via' in answer && answer.via) {
    const { applied, pending, blocked, held } = answer.body as DbStatus;
    return { applied, pending, blocked, via: answer.via, ...(held ? { held } : {}) };
  }
  return answer.body as DbStatus;
}
