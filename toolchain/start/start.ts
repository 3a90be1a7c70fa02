import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FwDatabase } from '../../runtime/db/database.ts';
import { planMigration } from '../../runtime/db/migrate.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { createRuntime, type Runtime } from '../../runtime/create-runtime.ts';
import type { OutboxWorker } from '../../runtime/outbox/worker.ts';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import { BUILD_DIR, loadBuiltApp, type ServerBuildManifest } from '../build/build.ts';
import { openAppDatabase, type DatabaseTarget } from '../../plugin/database-target.ts';
import { serviceNameOf, startTelemetry } from '../../runtime/telemetry/start-telemetry.ts';
import { migrateOrFail } from '../../plugin/dev-server/schema-hold.ts';
import { applyServerLimits, serverLimits, serverOptions } from '../../plugin/dev-server/server-limits.ts';
import { requireAuthChoice } from './auth-choice.ts';
import { createStaticHandler } from './static-files.ts';
import { resolveConfig } from '../../runtime/config/resolve-config.ts';
import { type AiSetup, aiSetup } from '../../runtime/ai/models.ts';

export interface StartOptions extends DatabaseTarget {
  root: string;
  port?: number;
  host?: string;
  /** Apply pending additive migrations before serving (default false: pending changes refuse to start). */
  migrate?: boolean;
  /** Run the outbox worker in this process (default true). */
  worker?: boolean;
  /** How long shutdown waits for in-flight requests before it cuts them (default 10 s). */
  graceMs?: number;
}

export interface ProductionServer {
  url: string;
  app: AppDefinition;
  db: FwDatabase;
  worker?: OutboxWorker;
  /** Whether built web assets are served. */
  web: boolean;
  /** Which models serve the agents (`fw start` says so, and warns when real users would get the mock). */
  ai: AiSetup;
  /**
   * Graceful shutdown: stops accepting connections, ends live streams with a reconnect hint, lets
   * in-flight requests finish (up to `graceMs`, then cuts them), stops the worker releasing its
   * leases, closes the live hub and the database.
   */
  close(): Promise<void>;
}

/**
 * `fw start`: serves a `fw build` in production mode (`dev: false`) — API, live streams and the
 * built web app from one `node:http` server, no Vite in the request path. Auth comes from `FW_AUTH`
 * (which must be set: `auth_not_configured` otherwise) and `FW_JWT_*`, the admin routes open to `FW_ADMIN_TOKEN`.
 */
export async function startProduction(options: StartOptions): Promise<ProductionServer> {
  const root = path.resolve(options.root);
  const buildDir = path.join(root, BUILD_DIR);
  const manifestFile = path.join(buildDir, 'server', 'manifest.json');
  if (!existsSync(manifestFile)) {
    throw new FwFailure('build_missing', `No build in ${path.relative(process.cwd(), buildDir) || buildDir}.`, { suggestions: ['fw build', 'fw start --root <app directory>'] });
  }
  // Before anything slow: a production server nobody can sign in to is refused, not started.
  requireAuthChoice(resolveConfig());
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as ServerBuildManifest;
  const app = await loadBuiltApp(root, path.join(buildDir, 'server', manifest.bundle), manifest.modules);

  // Before the database: its statements are traced too.
  const telemetry = await startTelemetry({ serviceName: serviceNameOf(root) });
  const db = await openAppDatabase(root, options).catch(async (error: unknown) => {
    await telemetry?.shutdown();
    throw error;
  });
  let runtime: Runtime | undefined;
  try {
    await checkMigrations(db, app, options.migrate === true);
    const config = resolveConfig();
    const adminToken = config.get('FW_ADMIN_TOKEN');
    const started = (runtime = await createRuntime({ app, db, dev: false, live: {}, worker: options.worker !== false, ...(adminToken ? { adminToken } : {}) }));
    const webDir = path.join(buildDir, 'web');
    const web = existsSync(path.join(webDir, 'index.html'));
    const serveStatic = web ? createStaticHandler(webDir) : undefined;
    const limits = serverLimits();
    const server = createServer(serverOptions(limits), (req, res) => {
      // Every answer, API or file: a browser never sniffs JSON or text into HTML or script.
      res.setHeader('x-content-type-options', 'nosniff');
      started.handler(req, res, () => {
        if (serveStatic) return serveStatic(req, res);
        res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify({ ok: false, error: { code: 'not_found', message: `No route ${req.method} ${req.url}.`, diagnostics: [] } }));
      });
    });
    applyServerLimits(server, limits);
    const host = options.host ?? '0.0.0.0';
    await listen(server, options.port ?? 3000, host);
    const address = server.address() as AddressInfo;
    const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
    let closing: Promise<void> | undefined;
    return {
      url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${address.port}`,
      app,
      db,
      ...(started.worker ? { worker: started.worker } : {}),
      web,
      ai: aiSetup(app.agents?.keys() ?? [], config),
      close: () =>
        (closing ??= (async () => {
          await started.close({ reconnect: true, drained: drain(server, options.graceMs ?? 10_000) });
          await telemetry?.shutdown();
        })()),
    };
  } catch (error) {
    if (runtime) await runtime.close().catch(() => undefined);
    else await db.close().catch(() => undefined);
    await telemetry?.shutdown();
    throw error;
  }
}

/** Pending schema changes refuse to start unless `migrate`; changes that need a decision refuse either way. */
async function checkMigrations(db: FwDatabase, app: AppDefinition, migrate: boolean): Promise<void> {
  const plan = await planMigration(db, app.schema);
  if (plan.blocked.length === 0 && plan.changes.length > 0 && !migrate) {
    throw new FwFailure('migrations_pending', `The database is behind the schema: ${plan.changes.length} change(s) pending (${plan.changes.map((c) => c.description).slice(0, 3).join('; ')}).`, {
      suggestions: ['fw db migrate  (then fw start)', 'fw start --migrate  (apply additive changes at startup)'],
    });
  }
  // Also refuses what needs a decision (migration_blocked), and makes sure live-capture triggers exist.
  if (migrate || plan.blocked.length > 0) await migrateOrFail(db, app);
}

/**
 * Stops accepting connections and resolves once every open one has ended: idle keep-alive sockets
 * are closed as they become idle, and whatever is still running after `graceMs` is cut.
 */
function drain(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new FwFailure('port_busy', `Port ${port} on ${host} is already in use.`, { suggestions: [`fw start --port ${port + 1}`, `lsof -i :${port}  (find what holds it)`], cause: error })
          : error,
      ),
    );
    server.once('listening', () => resolve());
    server.listen(port, host);
  });
}
