import { createDevLogger } from './dev-logger.ts';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ViteDevServer } from 'vite';
import { FwFailure } from '../../runtime/core/failure.ts';
import { serviceNameOf, startTelemetry } from '../../runtime/telemetry/start-telemetry.ts';
import { keepRecentLogs } from '../../runtime/telemetry/recent-logs.ts';
import { type ApiServer, startApiServer } from '../../plugin/dev-server/api-server.ts';
import { createDevRuntime, type DevRuntime } from '../../plugin/dev-server/dev-runtime.ts';
import { type DevOptions, type DevSession, summarise } from './dev-session.ts';
import { type AllowedHosts, allowedHostsFromEnv, mergeAllowedHosts } from '../../plugin/dev-server/host-check.ts';
import { startNuxtDev } from './nuxt-dev.ts';
import { isNuxtWeb } from '../../plugin/nuxt-web.ts';
import { writeRuntimeFile } from './runtime-file.ts';
import { shareRuntime } from '../../plugin/dev-server/shared-runtime.ts';
import { listWebFiles } from '../../plugin/analyse/frontend/files.ts';
import { listEntryFiles } from '../../plugin/load-app.ts';
import { untilWatched } from './watcher-ready.ts';
import { startDevServices } from './dev-services.ts';
import { readExternalServices } from '../../plugin/external-manifests.ts';
import { startTypecheck } from '../../plugin/dev-server/typecheck.ts';
import { typeOverlay, viteOverlayChannel } from '../../plugin/dev-server/typecheck-overlay.ts';
import { colourFor } from '../../runtime/config/colour.ts';
import { fwDevOwnsExit } from './vite-exit.ts';

export type { DevOptions, DevSession } from './dev-session.ts';

/**
 * `fw dev`: the API runtime and, when the app has `web/`, the web dev server (the app's own Vite and
 * vite.config.ts). Both serve the same runtime, so the web app calls its entries on its own origin.
 * A Nuxt `web/` runs its own `nuxt dev` instead, which serves the runtime through fw's Nuxt module (nuxt-dev.ts).
 */
export async function startDev(options: DevOptions): Promise<DevSession> {
  // OTEL_* set: spans of this process's runtime go to the configured exporter (docs/observability.md).
  // Spans are also kept in memory for the dashboard's Requests view (recent-spans.ts).
  const telemetry = await startTelemetry({ serviceName: serviceNameOf(options.root), recent: true });
  // …and the log lines, for its Logs view (recent-logs.ts).
  const stopKeepingLogs = keepRecentLogs();
  try {
    const session = await startDevSession(options);
    // External services whose manifests say how to start them run beside the app (dev-services.ts).
    const services = startDevServices((await readExternalServices(path.resolve(options.root))).services, { log: (line) => process.stderr.write(`${line}\n`) });
    // TypeScript checks the app in a worker thread, started once the session serves: it never holds up
    // start-up, a reload or a request (typecheck.ts).
    const root = path.resolve(options.root);
    const typecheck =
      options.typecheck === false || session.typechecksItself
        ? undefined
        : startTypecheck({
            root,
            watch: options.watch ?? true,
            colour: colourFor(process.stderr),
            log: (line) => process.stderr.write(`${line}\n`),
            // …and, with a Vite web/, in its error overlay.
            ...(session.overlay ? { onResult: typeOverlay(root, session.overlay) } : {}),
          });
    return {
      ...session,
      summary: { ...session.summary, services: services.status().map((s) => s.service) },
      close: async () => {
        await typecheck?.close();
        await services.close();
        await session.close();
        await telemetry?.shutdown();
        stopKeepingLogs();
      },
    };
  } catch (error) {
    await telemetry?.shutdown();
    stopKeepingLogs();
    throw error;
  }
}

async function startDevSession(options: DevOptions): Promise<DevSession> {
  const root = path.resolve(options.root);
  const hasWeb = existsSync(path.join(root, 'web'));
  if (options.apiOnly && options.webOnly) {
    throw new FwFailure('bad_flags', '--api-only and --web-only exclude each other.', { suggestions: ['fw dev', 'fw dev --api-only', 'fw dev --web-only'] });
  }
  if (options.webOnly && !hasWeb) {
    throw new FwFailure('no_web', `${root} has no web/ directory to serve.`, { suggestions: ['fw dev --api-only', 'fw make ui --framework vite'] });
  }
  const watch = options.watch ?? true;
  const worker = options.worker ?? true;
  const allowedHosts = options.allowedHosts ?? allowedHostsFromEnv();

  if (options.apiOnly || !hasWeb) {
    const api = await startApiServer({
      root,
      port: options.port,
      host: options.host,
      watch,
      worker,
      allowedHosts,
      onReload: options.onReload,
      command: options.apiOnly ? 'fw dev --api-only' : 'fw dev',
      ...(options.onStep ? { onStep: options.onStep } : {}),
    });
    const forget = writeRuntimeFile(root, { serverUrl: api.url });
    return {
      serverUrl: api.url,
      runtime: api.runtime,
      summary: summarise(api.runtime),
      close: async () => {
        forget();
        await api.close();
      },
    };
  }

  // A Nuxt web/ runs its own `nuxt dev` (nuxt-dev.ts).
  if (isNuxtWeb(root)) return startNuxtDev(root, { ...options, watch, worker, allowedHosts });

  // Bind the API port before the slow part so a busy port fails at once.
  let api: ApiServer | undefined;
  let runtime: DevRuntime | undefined;
  let web: ViteDevServer | undefined;
  // One setting for both ports: whatever the web port admits (the app's vite.config), the API port does.
  let viteHosts: AllowedHosts = [];
  let withdraw = () => {};
  let forget = () => {};
  const closeAll = async () => {
    withdraw();
    forget();
    // Live streams never end by themselves; end them before the servers wait for their connections.
    await runtime?.live.close();
    await web?.close();
    await api?.close();
    await runtime?.close();
  };
  try {
    const starting = createDevRuntime({ root, worker, ...(options.onStep ? { onStep: options.onStep } : {}) });
    if (!options.webOnly) {
      api = await startApiServer({ root, port: options.port, host: options.host, runtime: starting, allowedHosts: () => mergeAllowedHosts(allowedHosts, viteHosts) }).catch((error: unknown) => {
        void starting.then((r) => r.close(), () => undefined);
        throw error;
      });
    }
    runtime = await starting;
    withdraw = shareRuntime(runtime);
    options.onStep?.('starting Vite');
    const vite = await importAppVite(root);
    // Where the typecheck's errors show, kept on the server's websocket across Vite's restarts.
    const overlay = viteOverlayChannel();
    web = await vite.createServer({
      root: path.join(root, 'web'),
      clearScreen: false,
      logLevel: options.viteLogLevel ?? 'info',
      customLogger: createDevLogger(vite.createLogger, options.viteLogLevel ?? 'info'),
      // Vite's own SIGTERM exit would end the process in the middle of closeAll (vite-exit.ts).
      plugins: [fwDevOwnsExit(), overlay.plugin],
      server: {
        port: options.webPort ?? 5173,
        strictPort: false,
        host: options.host ?? '127.0.0.1',
        // Merged into the app's own server.allowedHosts (Vite concatenates; `true` wins).
        allowedHosts: allowedHosts === true ? true : [...allowedHosts],
        ...(watch ? {} : { watch: null }),
      },
    });
    viteHosts = web.config.server.allowedHosts;
    await web.listen();
    // Ready means edits are seen: every folder of web/ and of the backend is watched.
    options.onStep?.('watching files');
    await untilWatched(web, await sourceDirs(root));
    const webUrl = (web.resolvedUrls?.local[0] ?? '').replace(/\/$/, '');
    const served = runtime;
    forget = writeRuntimeFile(root, { ...(api ? { serverUrl: api.url } : {}), webUrl });
    return { ...(api ? { serverUrl: api.url } : {}), webUrl, runtime: served, summary: summarise(served), overlay: overlay.channel, close: closeAll };
  } catch (error) {
    await closeAll().catch(() => undefined);
    throw error;
  }
}

/** The folders whose edits fw dev acts on: those holding web/ sources and backend entries. */
async function sourceDirs(root: string): Promise<string[]> {
  const files = [...(await listWebFiles(root)), ...(await listEntryFiles(root)).map((e) => e.file)];
  return [...new Set(files.map((file) => path.join(root, path.dirname(file))))];
}

/** The app's own Vite (its plugins were built against it), falling back to fw's. */
async function importAppVite(root: string): Promise<typeof import('vite')> {
  try {
    const resolved = createRequire(path.join(root, 'package.json')).resolve('vite');
    return (await import(pathToFileURL(resolved).href)) as typeof import('vite');
  } catch {
    return import('vite');
  }
}
