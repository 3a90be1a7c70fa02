import { fileStamp } from './file-stamp.ts';
import path from 'node:path';
import type { FwDatabase } from '../../runtime/db/database.ts';
import { applyMigration, type MigrateOptions, type MigrationResult, migrationStatus, planMigration } from '../../runtime/db/migrate.ts';
import { FwError } from '../../runtime/core/errors.ts';
import type { AdminDatabase } from '../../runtime/http/admin-routes.ts';
import { logServerError } from '../../runtime/http/handler.ts';
import type { CorsOptions } from '../../runtime/http/cors.ts';
import type { RuntimeHandler } from '../../runtime/http/handler.ts';
import type { LiveHub, LiveOptions } from '../../runtime/live/hub.ts';
import { createRuntime } from '../../runtime/create-runtime.ts';
import { takeStatementSites } from '../../runtime/db/statement-site.ts';
import { createSingleFlight } from '../../runtime/core/single-flight.ts';
import type { OutboxWorker } from '../../runtime/outbox/worker.ts';
import type { OutboxWorkerOptions } from '../../runtime/app/outbox-worker.ts';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import { openAppDatabase, type DatabaseTarget } from '../database-target.ts';
import { type SeverityDiagnostic, toFailureDiagnostics } from '../analyse/failure-diagnostics.ts';
import { generateFromApp } from '../generate/generate.ts';
import { createAppLoader } from '../load-app.ts';
import { locateSchemaDiagnostics } from '../schema-locations.ts';
import { logOnce } from './log-once.ts';
import { schemaBlockedFailure, schemaHoldError } from './schema-hold.ts';

export interface DevRuntimeOptions extends DatabaseTarget {
  root: string;
  dev?: boolean;
  cors?: CorsOptions;
  /** Regenerate `src/fw/_generated/` after every (re)load, before the new app serves (default true). */
  generate?: boolean;
  /** Live-query settings (limits, retention, polling). */
  live?: LiveOptions;
  /**
   * Run the outbox worker, which delivers emitted events to actions (default false: `fw dev` turns it
   * on unless `--no-worker`). Options tune it (polling, leases, retries).
   */
  worker?: boolean | Omit<OutboxWorkerOptions, 'app' | 'db'>;
  /**
   * Told what the first start is doing as it goes (`loading the app`, `migrating the database`, …): `fw
   * dev` shows it on a terminal. Reloads are not reported here (`onReload`).
   */
  onStep?: (step: string) => void;
}

/** A reload's outcome; one that served the new app says what it changed in the database (`add column notes.pinned (…)`), in order. */
export type ReloadOutcome = { ok: true; app: AppDefinition; migrated: readonly string[] } | { ok: false; error: unknown };

/** The app as the dev server runs it: one database, and a handler that follows backend edits. */
export interface DevRuntime {
  readonly root: string;
  readonly db: FwDatabase;
  /** Stable across reloads: mount it once. */
  readonly handler: RuntimeHandler;
  /** Live queries: subscriptions survive reloads and re-run against the new code. */
  readonly live: LiveHub;
  /** The outbox worker when it runs (`worker` option); reloads hand it the new app. */
  readonly worker?: OutboxWorker;
  app(): AppDefinition;
  /** Warnings and notes from the last successful load (e.g. generation diagnostics). */
  diagnostics(): SeverityDiagnostic[];
  /** Calls `listener` with every server-side failure (5xx) it answers, after logging it (Vite's overlay shows them); returns an unsubscribe. */
  onServerError(listener: (error: FwError, traceId: string) => void): () => void;
  /** Re-reads changed backend files; on failure the previous app keeps serving. */
  reload(changedFiles: readonly string[]): Promise<ReloadOutcome>;
  close(): Promise<void>;
}

/**
 * Loads the app, opens its database, applies additive migrations and builds the runtime handler.
 * Fails (and releases everything) when the app does not load or its schema change needs a decision.
 */
export async function createDevRuntime(options: DevRuntimeOptions): Promise<DevRuntime> {
  const root = path.resolve(options.root);
  // A failed statement's error names the line that wrote it (runtime/db/statement-site.ts).
  takeStatementSites(true);
  // Only the first start is told: afterwards, reloads report themselves.
  let step = options.onStep ?? (() => {});
  step('loading the app');
  const loader = await createAppLoader(root);
  let db: FwDatabase | undefined;
  try {
    step('opening the database');
    const openedDb = (db = await openAppDatabase(root, options));
    const dev = options.dev ?? true;
    // The app as last loaded, served or held: what `fw db status` and `fw db migrate` compare the database with.
    let latest: AppDefinition | undefined;
    // Set while the latest app's schema is blocked: requests answer it (schema_blocked) instead of running.
    let hold: FwError | undefined;
    let serving = false;
    const errorListeners = new Set<(error: FwError, traceId: string) => void>();
    // A migration `fw db migrate` asked this process for (it holds the embedded database), folded
    // into the reloads below so it never races one, and what it did.
    let migrateRequest: MigrateOptions | undefined;
    let migrated: MigrationResult | undefined;
    const prepare = async (migrate: MigrateOptions = {}) => {
      step('loading the app');
      const app = await loader.load();
      latest = app;
      step('migrating the database');
      const migration = (migrated = await applyMigration(openedDb, app.schema, migrate));
      if (migration.blocked.length > 0) {
        const failure = schemaBlockedFailure(root, migration.blocked, serving);
        hold = schemaHoldError(failure);
        throw failure;
      }
      hold = undefined;
      if (options.generate !== false) step('generating src/fw/_generated');
      const generated = options.generate === false ? undefined : await generateFromApp(app, { root });
      // Generation notes plus the contract checks (frontend, agent boundaries): `fw dev --once` reports both.
      const diagnostics: SeverityDiagnostic[] = generated ? [...generated.diagnostics, ...generated.checks] : [];
      return { app, diagnostics };
    };
    let current = await prepare();
    serving = true;
    step('starting the runtime');
    const database: AdminDatabase = {
      status: async () => {
        const status = await migrationStatus(openedDb, latest!.schema);
        return { ...status, blocked: locateSchemaDiagnostics(root, status.blocked), held: hold !== undefined };
      },
      migrate: async ({ acceptDataLoss, dryRun }) => {
        if (dryRun) {
          const plan = await planMigration(openedDb, latest!.schema, { acceptDataLoss });
          return { dryRun: true, changes: plan.changes, blocked: locateSchemaDiagnostics(root, plan.blocked) };
        }
        migrateRequest = { acceptDataLoss };
        const outcome = await reloads.wake();
        if (!outcome.migration) {
          // The app did not load as far as its migration (a broken file): nothing was applied.
          throw new FwError('conflict', `Nothing was applied: the app does not load (${outcome.ok ? 'no migration ran' : errorMessage(outcome.error)}).`, {
            diagnostics: outcome.ok ? [] : toFailureDiagnostics(outcome.error).map(({ severity: _, ...d }) => d),
          });
        }
        return { ...outcome.migration, blocked: locateSchemaDiagnostics(root, outcome.migration.blocked), held: hold !== undefined };
      },
    };
    const failures = logOnce(logServerError);
    // After the first migration: the log and its capture triggers exist from here on.
    const runtime = await createRuntime({
      app: current.app,
      db: openedDb,
      dev,
      hold: () => hold,
      database,
      onError: (error, traceId) => {
        failures.log(error, traceId);
        for (const listener of errorListeners) listener(error, traceId);
      },
      live: options.live ?? {},
      worker: options.worker ?? false,
      ...(options.cors ? { cors: options.cors } : {}),
    });
    step = () => {};

    // Reloads never overlap and are not debounced: one runs at once; edits that arrive meanwhile are
    // folded into a single follow-up (core/single-flight.ts).
    const pending: string[] = [];
    const reloads = createSingleFlight(async (): Promise<ReloadOutcome & { migration?: MigrationResult }> => {
      // What every round of this run applied: the outcome says it, whichever round ends the run.
      const applied: string[] = [];
      for (let round = 0; ; round++) {
        const files = pending.splice(0);
        // A file that changed while it was being loaded (caught mid-write) is loaded again.
        const before = files.map(fileStamp);
        loader.invalidate(files);
        // Taken at the start of a run only: a request made during it belongs to the follow-up its wakeup asked for.
        const request = round === 0 ? migrateRequest : undefined;
        if (round === 0) migrateRequest = undefined;
        migrated = undefined;
        let outcome: ReloadOutcome;
        try {
          current = await prepare(request);
          // (Set by prepare(), which TypeScript cannot see from here.)
          applied.push(...((migrated as MigrationResult | undefined)?.applied ?? []).map((change) => change.description));
          runtime.setApp(current.app);
          // Changed code may fail the same way again: that is news.
          failures.forget();
          outcome = { ok: true, app: current.app, migrated: applied };
        } catch (error) {
          outcome = { ok: false, error };
        }
        // `fw db migrate` waits for the run that applied it, whatever an edit in the meantime did.
        if (request) return { ...outcome, ...(migrated ? { migration: migrated } : {}) };
        const moved = files.filter((file, i) => fileStamp(file) !== before[i]);
        if (moved.length === 0 || round >= 10) return outcome;
        pending.push(...moved);
      }
    });
    const reload = (changedFiles: readonly string[]): Promise<ReloadOutcome> => {
      pending.push(...changedFiles);
      return reloads.wake();
    };

    return {
      root,
      db: openedDb,
      handler: runtime.handler,
      live: runtime.live!,
      ...(runtime.worker ? { worker: runtime.worker } : {}),
      app: () => current.app,
      diagnostics: () => current.diagnostics,
      onServerError(listener) {
        errorListeners.add(listener);
        return () => errorListeners.delete(listener);
      },
      reload,
      async close() {
        await reloads.close();
        await runtime.close();
        await loader.close();
      },
    };
  } catch (error) {
    await db?.close().catch(() => undefined);
    await loader.close().catch(() => undefined);
    throw error;
  }
}




function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
