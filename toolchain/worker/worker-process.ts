import path from 'node:path';
import type { FwDatabase } from '../../runtime/db/database.ts';
import type { OutboxWorkerOptions } from '../../runtime/app/outbox-worker.ts';
import { createRuntime } from '../../runtime/create-runtime.ts';
import { type OutboxWorker } from '../../runtime/outbox/worker.ts';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import { openAppDatabase, type DatabaseTarget } from '../../plugin/database-target.ts';
import { serviceNameOf, startTelemetry } from '../../runtime/telemetry/start-telemetry.ts';
import { migrateOrFail } from '../../plugin/dev-server/schema-hold.ts';
import { createAppLoader } from '../../plugin/load-app.ts';

export interface WorkerProcessOptions extends DatabaseTarget, Omit<OutboxWorkerOptions, 'app' | 'db'> {
  root: string;
}

export interface WorkerProcess {
  app: AppDefinition;
  db: FwDatabase;
  worker: OutboxWorker;
  /** Stops the worker (running deliveries finish or give their rows back), then closes the database. */
  close(): Promise<void>;
}

/**
 * `fw worker`: the app's outbox worker without an HTTP server. Loads the app, opens its database
 * (`DATABASE_URL`, or the embedded `.fw/db` — which one process holds at a time, so not beside a
 * running `fw dev`), applies additive migrations as `fw dev` does, and starts delivering.
 */
export async function startWorkerProcess(options: WorkerProcessOptions): Promise<WorkerProcess> {
  const { root: given, databaseUrl, ...workerOptions } = options;
  const root = path.resolve(given);
  const loader = await createAppLoader(root);
  const telemetry = await startTelemetry({ serviceName: serviceNameOf(root) });
  let db: FwDatabase | undefined;
  try {
    const app = await loader.load();
    db = await openAppDatabase(root, databaseUrl ? { databaseUrl } : {});
    await migrateOrFail(db, app, root);
    // The runtime without its HTTP face: no live hub, the handler never mounted.
    const runtime = await createRuntime({ app, db, dev: false, live: false, worker: workerOptions });
    return {
      app,
      db,
      worker: runtime.worker!,
      async close() {
        await runtime.close();
        await loader.close();
        await telemetry?.shutdown();
      },
    };
  } catch (error) {
    await db?.close().catch(() => undefined);
    await loader.close().catch(() => undefined);
    await telemetry?.shutdown();
    throw error;
  }
}
