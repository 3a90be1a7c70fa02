/**
 * One runtime, assembled once, whoever runs it — `fw start`, `fw dev`, the Vite plugin, `fw verify`,
 * `fwjs/testing`, fw's own tests and benchmarks: the HTTP handler, the live hub, the outbox worker and
 * the gauges over one app and one database, started in one order and closed in the reverse one.
 */
import { observeRuntime } from './app/observe-runtime.ts';
import { resolveConfig } from './config/resolve-config.ts';
import { FwFailure } from './core/failure.ts';
import { assertSupportedNode } from './core/supported-node.ts';
import { createOutboxWorker, type OutboxWorkerOptions } from './app/outbox-worker.ts';
import type { AppDefinition } from './core/app-definition.ts';
import type { FwDatabase } from './db/database.ts';
import { createRuntimeHandler, type RuntimeHandler, type RuntimeHandlerOptions } from './http/handler.ts';
import { createLiveHub, type LiveHub, type LiveOptions } from './live/hub.ts';
import type { OutboxWorker } from './outbox/worker.ts';

export interface RuntimeOptions extends Omit<RuntimeHandlerOptions, 'app' | 'db' | 'live'> {
  app: AppDefinition;
  /** Migrated to the app's schema already (the log tables the hub reads must exist). */
  db: FwDatabase;
  /** Live queries: the hub's limits, retention and polling (default on, with its defaults); `false` serves none. */
  live?: LiveOptions | false;
  /**
   * Run the outbox worker in this process (default false), with its settings (AI: the handler's unless
   * given). `start: false` makes it without starting it: its caller runs it (`runOnce`, `fwjs/testing`).
   */
  worker?: boolean | (Omit<OutboxWorkerOptions, 'app' | 'db'> & { start?: boolean });
  /** Close the database with the runtime (default true). */
  closeDatabase?: boolean;
}

export interface Runtime {
  readonly db: FwDatabase;
  /** Stable across `setApp`: mount it once. */
  readonly handler: RuntimeHandler;
  readonly live?: LiveHub;
  readonly worker?: OutboxWorker;
  /** The app being served. */
  app(): AppDefinition;
  /** Serves `app` from now on (a dev reload): new requests, every live group and the worker take it. */
  setApp(app: AppDefinition): void;
  /**
   * Stops in the reverse order of starting: live streams end (`reconnect`: with a hint to reconnect to
   * another process), then — once `drained` resolves (the HTTP server's in-flight requests) — the
   * worker stops (giving its leases back), the gauges go, and the database closes.
   */
  close(options?: { reconnect?: boolean; drained?: Promise<unknown> }): Promise<void>;
}

/**
 * Assembles and starts a runtime for `options.app` on `options.db`.
 *
 * @example
 *   const runtime = await createRuntime({ app, db, dev: false, worker: true });
 *   createServer(runtime.handler).listen(3000);
 */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  assertSupportedNode();
  const { app: first, db, live: liveOptions, worker: workerOptions, closeDatabase = true, ...rest } = options;
  // Every variable checked before anything starts: a malformed one fails here, not at its first use.
  const config = rest.config ?? resolveConfig();
  const [problem, ...more] = config.problems();
  if (problem) {
    throw more.length === 0
      ? problem
      : new FwFailure('bad_config', [problem, ...more].map((p) => p.message).join(' '), { suggestions: ['fw config  (shows every variable and what is wrong with it)'] });
  }
  const handlerOptions = { ...rest, config };
  let app = first;
  // A live query's server-side failure is told where a request's is (fw dev: the terminal once, and the overlay).
  const hub =
    liveOptions === false
      ? undefined
      : createLiveHub(db, {
          dev: handlerOptions.dev,
          ...(handlerOptions.clock ? { clock: handlerOptions.clock } : {}),
          ...(handlerOptions.onError ? { onError: handlerOptions.onError } : {}),
          ...liveOptions,
        });
  const handlerFor = (served: AppDefinition) => createRuntimeHandler({ ...handlerOptions, app: served, db, ...(hub ? { live: hub } : {}) });
  let handler = handlerFor(app);
  hub?.setApp(app);
  let worker: OutboxWorker | undefined;
  try {
    await hub?.start();
    if (workerOptions) {
      const shared = { ...(handlerOptions.ai ? { ai: handlerOptions.ai } : {}), ...(handlerOptions.clock ? { clock: handlerOptions.clock } : {}) };
      const { start = true, ...settings } = workerOptions === true ? {} : workerOptions;
      worker = createOutboxWorker({ ...shared, ...settings, app, db });
      if (start) worker.start();
    }
  } catch (error) {
    await hub?.close().catch(() => undefined);
    throw error;
  }
  const unobserve = observeRuntime({ db, ...(hub ? { live: hub } : {}) });
  let closing: Promise<void> | undefined;
  return {
    db,
    handler: (req, res, next) => handler(req, res, next),
    ...(hub ? { live: hub } : {}),
    ...(worker ? { worker } : {}),
    app: () => app,
    setApp(next) {
      app = next;
      handler = handlerFor(next);
      hub?.setApp(next);
      worker?.setApp(next);
    },
    close: ({ reconnect = false, drained } = {}) =>
      (closing ??= (async () => {
        unobserve();
        await hub?.close({ reconnect });
        await drained;
        await worker?.stop({ releaseLeases: true });
        if (closeDatabase) await db.close();
      })()),
  };
}
