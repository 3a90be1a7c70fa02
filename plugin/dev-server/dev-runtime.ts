import { fileStamp } from './file-stamp.ts';
import path from 'node:path';
import type { FwDatabase } from '../../runtime/db/database.ts';
import { applyMigration } from '../../runtime/db/migrate.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import type { CorsOptions } from '../../runtime/http/cors.ts';
import type { RuntimeHandler } from '../../runtime/http/handler.ts';
import type { LiveHub, LiveOptions } from '../../runtime/live/hub.ts';
import { createRuntime } from '../../runtime/create-runtime.ts';
import { createSingleFlight } from '../../runtime/core/single-flight.ts';
import type { OutboxWorker } from '../../runtime/outbox/worker.ts';
import type { OutboxWorkerOptions } from '../../runtime/app/outbox-worker.ts';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import { openAppDatabase, type DatabaseTarget } from '../database-target.ts';
import type { SeverityDiagnostic } from '../failure-diagnostics.ts';
import { generateFromApp } from '../generate/generate.ts';
import { createAppLoader } from '../load-app.ts';

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
}

export type ReloadOutcome = { ok: true; app: AppDefinition } | { ok: false; error: unknown };

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
  const loader = await createAppLoader(root);
  let db: FwDatabase | undefined;
  try {
    const openedDb = (db = await openAppDatabase(root, options));
    const dev = options.dev ?? true;
    const prepare = async () => {
      const app = await loader.load();
      await migrateOrFail(openedDb, app);
      const generated = options.generate === false ? undefined : await generateFromApp(app, { root });
      // Generation notes plus the contract checks (frontend, agent boundaries): `fw dev --once` reports both.
      const diagnostics: SeverityDiagnostic[] = generated ? [...generated.diagnostics, ...generated.checks] : [];
      return { app, diagnostics };
    };
    let current = await prepare();
    // After the first migration: the log and its capture triggers exist from here on.
    const runtime = await createRuntime({
      app: current.app,
      db: openedDb,
      dev,
      live: options.live ?? {},
      worker: options.worker ?? false,
      ...(options.cors ? { cors: options.cors } : {}),
    });

    // Reloads never overlap and are not debounced: one runs at once; edits that arrive meanwhile are
    // folded into a single follow-up (core/single-flight.ts).
    const pending: string[] = [];
    const reloads = createSingleFlight(async (): Promise<ReloadOutcome> => {
      for (let round = 0; ; round++) {
        const files = pending.splice(0);
        // A file that changed while it was being loaded (caught mid-write) is loaded again.
        const before = files.map(fileStamp);
        loader.invalidate(files);
        let outcome: ReloadOutcome;
        try {
          current = await prepare();
          runtime.setApp(current.app);
          outcome = { ok: true, app: current.app };
        } catch (error) {
          outcome = { ok: false, error };
        }
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

/** Applies the app's additive migrations; a change that needs a decision fails with `migration_blocked`. */
export async function migrateOrFail(db: FwDatabase, app: AppDefinition): Promise<void> {
  const migration = await applyMigration(db, app.schema);
  if (migration.blocked.length > 0) {
    throw new FwFailure('migration_blocked', 'The schema has changes fw will not apply automatically.', {
      diagnostics: migration.blocked,
      suggestions: ['fw db status --json', 'fw db migrate --accept-data-loss  (only if losing that data is intended)'],
    });
  }
}

