import { reportReloads } from './reload-report.ts';
import { mkdirSync, watch } from 'node:fs';
import { isManifestFile } from '../external-manifests.ts';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, isIP } from 'node:net';
import path from 'node:path';
import { FwFailure } from '../../runtime/core/failure.ts';
import { createDevRuntime, type DevRuntime, type DevRuntimeOptions, type ReloadOutcome } from './dev-runtime.ts';
import { type AllowedHosts, allowedHostsFromEnv, hostRefusal, isHostAllowed, mergeAllowedHosts } from './host-check.ts';
import { applyServerLimits, serverLimits, serverOptions } from './server-limits.ts';

export { openAppDatabase, type DatabaseTarget } from '../database-target.ts';

export interface ApiServerOptions extends DevRuntimeOptions {
  port?: number;
  host?: string;
  /** Reload backend files when they change (default false). */
  watch?: boolean;
  onReload?: (outcome: ReloadOutcome, files: readonly string[]) => void;
  /** Serve this runtime (possibly still starting) instead of creating one, e.g. one shared with Vite. */
  runtime?: DevRuntime | Promise<DevRuntime>;
  /**
   * Hosts beyond loopback names and IPs this port answers (default `FW_ALLOWED_HOSTS`; host-check.ts).
   * A function is asked on every request: `fw dev` adds Vite's `server.allowedHosts` once Vite is up.
   */
  allowedHosts?: AllowedHosts | (() => AllowedHosts);
  /**
   * The command as the user ran it, without `--port` (default `fw dev`): a busy port's suggestions
   * repeat it with another port, and add no flag the user did not give.
   */
  command?: string;
}

export interface ApiServer {
  url: string;
  runtime: DevRuntime;
  close(): Promise<void>;
}

/**
 * Serves the app's runtime over HTTP. The port is bound first, so a busy port fails at once instead
 * of after the app has loaded; until the app is ready, requests get 503 `unavailable`.
 */
export async function startApiServer(options: ApiServerOptions): Promise<ApiServer> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 3100;
  let runtime: DevRuntime | undefined;
  const configured = options.allowedHosts ?? allowedHostsFromEnv();
  // The name it listens on is its own (`--host mybox.lan`), as Vite adds `server.host`.
  const ownName: AllowedHosts = isIP(host) === 0 ? [host.toLowerCase()] : [];
  const allowedHosts = () => mergeAllowedHosts(typeof configured === 'function' ? configured() : configured, ownName);
  const limits = serverLimits();
  const server = createServer(serverOptions(limits), (req, res) => {
    // JSON answers are never to be sniffed into HTML or script by a browser.
    res.setHeader('x-content-type-options', 'nosniff');
    if (!isHostAllowed(req.headers.host, allowedHosts())) {
      res.writeHead(403, { 'content-type': 'application/json; charset=utf-8' });
      return void res.end(hostRefusal(req.headers.host));
    }
    if (runtime) return runtime.handler(req, res);
    res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' });
    res.end(JSON.stringify({ ok: false, error: { code: 'unavailable', message: 'fw is starting.', diagnostics: [] } }));
  });
  applyServerLimits(server, limits);
  await listen(server, port, host, options.command ?? 'fw dev');
  const stopListening = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      // Streams of a runtime we share (live queries) end when its owner closes it; do not wait forever.
      setTimeout(() => server.closeAllConnections(), 2000).unref();
    });

  try {
    runtime = await (options.runtime ?? createDevRuntime(options));
  } catch (error) {
    await stopListening();
    throw error;
  }
  const served = runtime;
  const stopWatching = options.watch ? watchBackend(served, options.onReload) : () => {};
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    runtime: served,
    async close() {
      stopWatching();
      // Live streams never end by themselves: end them first so the server can close.
      if (!options.runtime) await served.live.close();
      await stopListening();
      if (!options.runtime) await served.close();
    },
  };
}

/** Backend sources: everything under src/ except what fw generates there. */
export function isBackendSource(root: string, file: string): boolean {
  const rel = path.relative(path.join(root, 'src'), file).split(path.sep).join('/');
  return !rel.startsWith('..') && !rel.startsWith('fw/_generated/') && /\.[cm]?[jt]sx?$/.test(rel);
}

function watchBackend(runtime: DevRuntime, onReload: ApiServerOptions['onReload']): () => void {
  const src = path.join(runtime.root, 'src');
  const report = reportReloads(onReload);
  const watcher = watch(src, { recursive: true }, (_event, name) => {
    if (!name) return;
    const file = path.join(src, name.toString());
    if (!isBackendSource(runtime.root, file)) return;
    report(file, runtime.reload([file]));
  });
  watcher.on('error', () => watcher.close());
  // Manifests live outside src/: the root fw.manifest.json and the registry under .fw/.
  const manifests = [runtime.root, path.join(runtime.root, '.fw')].map((dir) => {
    mkdirSync(dir, { recursive: true });
    const w = watch(dir, (_event, name) => {
      const file = name ? path.join(dir, name.toString()) : '';
      if (isManifestFile(runtime.root, file)) report(file, runtime.reload([file]));
    });
    w.on('error', () => w.close());
    return w;
  });
  return () => {
    watcher.close();
    for (const w of manifests) w.close();
  };
}

function listen(server: Server, port: number, host: string, command: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      if (error.code === 'EADDRINUSE') {
        reject(
          new FwFailure('port_busy', `Port ${port} on ${host} is already in use.`, {
            suggestions: [`${command} --port 0  (pick a free port)`, `${command} --port ${port + 1}`, `lsof -i :${port}  (find what holds it)`],
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
