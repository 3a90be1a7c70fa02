import path from 'node:path';
import type { Diagnostic } from '../../runtime/core/errors.ts';
import { applyMigration, planMigration, type PlannedChange } from '../../runtime/db/migrate.ts';
import { schemaBlockedFailure } from '../../plugin/dev-server/schema-hold.ts';
import { type LocatedDiagnostic, locateSchemaDiagnostics } from '../../plugin/schema-locations.ts';
import { withAppDatabase } from './app-database.ts';

export interface DbMigrateOptions {
  /** Also apply drops of columns and tables (`--accept-data-loss`). */
  acceptDataLoss?: boolean;
  /** Plan only: what would be applied and what is blocked, nothing changed (`--dry-run`). */
  dryRun?: boolean;
}

export type DbMigrateResult =
  | { dryRun: true; changes: PlannedChange[]; blocked: LocatedDiagnostic[]; via?: string }
  | { dryRun: false; applied: PlannedChange[]; migrationId: number | null; via?: string };

/**
 * `fw db migrate`: applies the schema's pending changes (all or nothing), directly or through the
 * running `fw dev` that holds the embedded database (which then serves the migrated app). A change that
 * needs a decision fails with `migration_blocked`, each change with its schema line, reason and fix.
 */
export async function migrateDatabase(rootDir: string, options: DbMigrateOptions = {}): Promise<DbMigrateResult> {
  const root = path.resolve(rootDir);
  const acceptDataLoss = options.acceptDataLoss === true;
  const dryRun = options.dryRun === true;
  const answer = await withAppDatabase(root, {
    direct: async (app, db) =>
      dryRun ? { dryRun: true, ...(await planMigration(db, app.schema, { acceptDataLoss })) } : { dryRun: false, ...(await applyMigration(db, app.schema, { acceptDataLoss })) },
    viaDev: (ask) => ask('/_fw/db/migrate', 'POST', { acceptDataLoss, dryRun }),
  });
  const via = 'via' in answer ? { via: answer.via } : {};
  const body = answer.body as { changes?: PlannedChange[]; applied?: PlannedChange[]; blocked: Diagnostic[]; migrationId?: number | null };
  if (dryRun) return { dryRun: true, changes: body.changes ?? [], blocked: locateSchemaDiagnostics(root, body.blocked), ...via };
  if (body.blocked.length > 0) throw schemaBlockedFailure(root, body.blocked, false);
  return { dryRun: false, applied: body.applied ?? [], migrationId: body.migrationId ?? null, ...via };
}
