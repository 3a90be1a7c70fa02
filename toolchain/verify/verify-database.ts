import { existsSync } from 'node:fs';
import path from 'node:path';
import { createDatabase, type FwDatabase } from '../../runtime/db/database.ts';
import { applyMigration, planMigration } from '../../runtime/db/migrate.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import { type ApiServer, startApiServer } from '../../plugin/dev-server/api-server.ts';
import { toFailureDiagnostics } from '../../plugin/analyse/failure-diagnostics.ts';
import { createMemoryRuntime } from '../../plugin/dev-server/memory-runtime.ts';
import type { VerifyDiagnostic } from '../../plugin/analyse/failure-diagnostics.ts';
import { resolveConfig } from '../../runtime/config/resolve-config.ts';

// The two gates of `fw verify` that need a database. A PGlite data directory has one owner at a time
// (runtime/db/data-dir-lock.ts): while `fw dev` runs, the app database is locked, so both fall back
// to a throwaway in-memory PGlite migrated to the app's schema, and say so in an info diagnostic.

/**
 * The runtime boot probe of `fw dev --once`: start the runtime on a free port (app database, additive
 * migrations), `GET /health`, stop. Unlike `fw dev --once` it does not regenerate `src/fw/_generated/`:
 * verify reports drift, it does not repair it.
 */
export async function probeBoot(root: string, app: AppDefinition): Promise<VerifyDiagnostic[]> {
  const diagnostics: VerifyDiagnostic[] = [];
  let server: ApiServer;
  let closeRuntime = async () => {};
  try {
    server = await startApiServer({ root, port: 0, generate: false });
    const url = Boolean(resolveConfig().get('DATABASE_URL'));
    diagnostics.push(note(url ? 'DATABASE_URL' : '.fw/db', 'boot_database', `Booted on the app database (${url ? 'PostgreSQL, DATABASE_URL' : 'PGlite, .fw/db'}).`));
  } catch (error) {
    if (!isLocked(error)) return toFailureDiagnostics(error);
    const runtime = await createMemoryRuntime(root, app);
    closeRuntime = runtime.close;
    server = await startApiServer({ root, port: 0, runtime });
    diagnostics.push(note('memory://', 'boot_database', `Booted on a throwaway in-memory database: ${(error as Error).message}`));
  }
  try {
    const response = await fetch(`${server.url}/health`);
    const body = await response.text();
    if (response.status !== 200) {
      diagnostics.push({ path: 'GET /health', code: 'health_failed', severity: 'error', message: `GET /health answered ${response.status}: ${body.slice(0, 300)}`, suggestedCommand: 'fw dev --once --json' });
    }
  } catch (error) {
    diagnostics.push({ path: 'GET /health', code: 'health_failed', severity: 'error', message: `GET /health failed: ${(error as Error).message}`, suggestedCommand: 'fw dev --once --json' });
  } finally {
    await server.close();
    await closeRuntime();
  }
  return diagnostics;
}

/**
 * The migrations check: on the app database, changes that need a decision are errors and additive
 * pending changes warnings (`fw dev` applies those on start). Without a usable app database (none yet,
 * or locked by `fw dev`), the schema is migrated from empty in memory: that catches changes fw refuses
 * and a plan that does not settle, not what is pending against the app's data.
 */
export async function checkMigrations(root: string, app: AppDefinition): Promise<VerifyDiagnostic[]> {
  const target = await openMigrationTarget(root);
  const diagnostics: VerifyDiagnostic[] = [note(target.where, 'migrations_database', target.description)];
  try {
    if (target.kind === 'app') {
      const plan = await planMigration(target.db, app.schema);
      diagnostics.push(...plan.blocked.map(blockedDiagnostic));
      for (const change of plan.changes) {
        diagnostics.push({
          path: change.table ? `schema.${change.table}${change.column ? `.${change.column}` : ''}` : 'schema',
          code: 'migration_pending',
          severity: 'warning',
          message: `Pending: ${change.description}.`,
          hint: 'Additive: `fw dev` applies it on start.',
          suggestedCommand: 'fw db migrate',
        });
      }
    } else {
      const applied = await applyMigration(target.db, app.schema);
      diagnostics.push(...applied.blocked.map(blockedDiagnostic));
      if (applied.blocked.length === 0) {
        const again = await planMigration(target.db, app.schema);
        for (const change of again.changes) {
          diagnostics.push({ path: 'schema', code: 'migration_unsettled', severity: 'warning', message: `Still planned after migrating: ${change.description} (an fw planner bug; please report it).`, suggestedCommand: 'fw db status --json' });
        }
      }
    }
  } finally {
    await target.db.close();
  }
  return diagnostics;
}

type MigrationTarget = { kind: 'app' | 'memory'; db: FwDatabase; where: string; description: string };

async function openMigrationTarget(root: string): Promise<MigrationTarget> {
  const url = resolveConfig().get('DATABASE_URL');
  if (url) return { kind: 'app', db: await createDatabase({ url }), where: 'DATABASE_URL', description: 'Checked against the app database (PostgreSQL, DATABASE_URL).' };
  const dataDir = path.join(root, '.fw', 'db');
  const memory = async (why: string): Promise<MigrationTarget> => ({
    kind: 'memory',
    db: await createDatabase({ dataDir: 'memory://' }),
    where: 'memory://',
    description: `Checked against a throwaway in-memory database (${why}): the schema migrates from empty; what is pending against the app's own data was not checked.`,
  });
  if (!existsSync(dataDir)) return memory('the app has no database yet: .fw/db does not exist');
  try {
    return { kind: 'app', db: await createDatabase({ dataDir }), where: '.fw/db', description: 'Checked against the app database (PGlite, .fw/db).' };
  } catch (error) {
    if (isLocked(error)) return memory((error as Error).message.replace(/\.$/, ''));
    throw error;
  }
}

function blockedDiagnostic(d: { path: string; code: string; message: string; hint?: string }): VerifyDiagnostic {
  return { path: d.path, code: d.code, severity: 'error', message: d.message, ...(d.hint ? { hint: d.hint } : {}), suggestedCommand: 'fw db status --json' };
}

function isLocked(error: unknown): boolean {
  return error instanceof FwFailure && error.kind === 'database_locked';
}

function note(where: string, code: string, message: string): VerifyDiagnostic {
  return { path: where, code, severity: 'info', message };
}
