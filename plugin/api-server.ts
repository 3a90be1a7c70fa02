import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createDatabase, type FwDatabase } from '../runtime/db/database.ts';
import { applyMigration, ensureSystemTables } from '../runtime/db/migrate.ts';
import { FwFailure } from '../runtime/failure.ts';
import { createRuntimeHandler, type RuntimeHandler } from '../runtime/http/handler.ts';
import type { CorsOptions } from '../runtime/http/cors.ts';
import type { AppDefinition } from '../runtime/registry.ts';
import { type AppLoader, createAppLoader } from './load-app.ts';

export interface DatabaseTarget {
  /** PostgreSQL URL; defaults to `DATABASE_URL`. Without one, PGlite under `<root>/.fw/db`. */
  databaseUrl?: string;
}

/** Opens the app's database: `DATABASE_URL` (PostgreSQL) or embedded PGlite in `.fw/db`. */
export async function openAppDatabase(root: string, target: DatabaseTarget = {}): Promise<FwDatabase> {
  const url = target.databaseUrl ?? process.env.DATABASE_URL;
  const db = await createDatabase(url ? { url } : { dataDir: path.join(root, '.fw', 'db') });
  await ensureSystemTables(db);
  return db;
}

export interface ApiServerOptions extends DatabaseTarget {
  root: string;
  port?: number;
  host?: string;
  dev?: boolean;
  cors?: CorsOptions;
}

export interface ApiServer {
  url: string;
  app: AppDefinition;
  db: FwDatabase;
  close(): Promise<void>;
}

/**
 * Loads the app, brings its database up to date (additive changes only), and serves the runtime.
 * The port is bound first, so a busy port fails at once instead of after the app has loaded.
 */
export async function startApiServer(options: ApiServerOptions): Promise<ApiServer> {
  const root = path.resolve(options.root);
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 3100;
  let handler: RuntimeHandler | undefined;
  const server = createServer((req, res) => {
    if (handler) return handler(req, res);
    res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' });
    res.end(JSON.stringify({ ok: false, error: { code: 'unavailable', message: 'fw is starting.', diagnostics: [] } }));
  });
  await listen(server, port, host);
  const stopListening = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });

  let loader: AppLoader | undefined;
  let db: FwDatabase | undefined;
  try {
    loader = await createAppLoader(root);
    const app = await loader.load();
    db = await openAppDatabase(root, options);
    const migration = await applyMigration(db, app.schema);
    if (migration.blocked.length > 0) {
      throw new FwFailure('migration_blocked', 'The schema has changes fw will not apply automatically.', {
        diagnostics: migration.blocked,
        suggestions: ['fw db status --json', 'fw db migrate --accept-data-loss  (only if losing that data is intended)'],
      });
    }
    handler = createRuntimeHandler({ app, db, dev: options.dev ?? true, ...(options.cors ? { cors: options.cors } : {}) });
    const address = server.address() as AddressInfo;
    const openDb = db;
    const openLoader = loader;
    return {
      url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
      app,
      db: openDb,
      async close() {
        await stopListening();
        await openDb.close();
        await openLoader.close();
      },
    };
  } catch (error) {
    await stopListening();
    await db?.close().catch(() => undefined);
    await loader?.close().catch(() => undefined);
    throw error;
  }
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      if (error.code === 'EADDRINUSE') {
        reject(
          new FwFailure('port_busy', `Port ${port} on ${host} is already in use.`, {
            suggestions: [`fw dev --api-only --port 0  (pick a free port)`, `fw dev --api-only --port ${port + 1}`, `lsof -i :${port}  (find what holds it)`],
            cause: error,
          }),
        );
      } else reject(error);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}
