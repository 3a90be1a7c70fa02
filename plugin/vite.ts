import { reloadedLine, reportReloads } from './dev-server/reload-report.ts';
import path from 'node:path';
import { createUnplugin } from 'unplugin';
import { type Plugin, type ResolvedConfig, searchForWorkspaceRoot, type ViteDevServer } from 'vite';
import { assertSupportedNode } from '../runtime/core/supported-node.ts';
import { serviceNameOf, startTelemetry } from '../runtime/telemetry/start-telemetry.ts';
import { isBackendSource } from './dev-server/api-server.ts';
import { createDevRuntime, type DevRuntime } from './dev-server/dev-runtime.ts';
import { hostRefusal, isHostAllowed } from './dev-server/host-check.ts';
import { generateBeforeBuild, generatedKept } from './generate/build-generation.ts';
import { fwPackageRoot } from './package-root.ts';
import { type OverlayError, overlayError } from './overlay-error.ts';
import { setFwProblem } from './dev-server/fw-problem.ts';
import { claimSharedRuntime } from './dev-server/shared-runtime.ts';
import { watchFrontend } from './vite-frontend.ts';
import { typecheckInServer } from './dev-server/typecheck-in-server.ts';
import { isManifestFile, REGISTRY_FILE, ROOT_MANIFEST } from './external-manifests.ts';

export interface FwPluginOptions {
  /** The app root (holding `src/`). Default: the parent of Vite's root when that is `web/`, else Vite's root. */
  root?: string;
  /** Run the outbox worker (delivers emitted events to actions) in a runtime of the plugin's own (default true). */
  worker?: boolean;
  /**
   * Typecheck the app in the background, its errors in the terminal and this server's overlay (default
   * false: `fw dev` typechecks a Vite web/ itself; fw's Nuxt module turns it on, typecheck-in-server.ts).
   */
  typecheck?: boolean;
}

/**
 * fw's Vite plugin: serves the app's runtime routes from the Vite dev server (one origin, no CORS),
 * reloads backend entries when their files change without a restart, and shows backend failures in
 * Vite's overlay.
 *
 * @example
 *   // web/vite.config.ts
 *   import fw from 'fwjs/vite';
 *   export default defineConfig({ plugins: [react(), fw()] });
 */
export const fwUnplugin = createUnplugin<FwPluginOptions | undefined>((options) => {
  assertSupportedNode();
  let build: { root: string; logger: ResolvedConfig['logger'] } | undefined;
  // The runtime this plugin started (not one `fw dev` shares), closed once with the dev server.
  let closeOwnRuntime: (() => Promise<void>) | undefined;
  return {
    name: 'fw:runtime',
    vite: {
      // Vite calls it when the dev server closes — also in middleware mode (Nuxt), which has no
      // httpServer: a Nuxt restart (nuxt.config edited) must let go of the database before the next runtime opens it.
      async closeBundle() {
        await closeOwnRuntime?.();
      },
      configResolved(config) {
        build = config.command === 'build' ? { root: resolveAppRoot(config.root, options?.root), logger: config.logger } : undefined;
      },
      // `vite build`: the typed client the web imports is regenerated first, never shipped stale
      // (except under `fw verify`, which builds what is on disk and reports drift instead).
      async buildStart() {
        if (!build || generatedKept()) return;
        const regenerated = await generateBeforeBuild(build.root);
        if (regenerated.length > 0) build.logger.info(`fw: regenerated ${regenerated.join(', ')} (older than the entries)`);
      },
      config(config) {
        const viteRoot = path.resolve(config.root ?? process.cwd());
        const fwRoot = fwPackageRoot();
        // fw linked from a checkout (`file:`/`npm link`, fw's own tests) is served as source, and Vite would
        // hot-update a page from its dist/ while a build there rewrites it file by file: two copies of
        // fwjs/react's context in one page ("must be used inside <FwProvider>"), a live list stuck on
        // "Connecting…". Installed, it sits in node_modules, which Vite never watches; linked, it is not
        // watched either (the runtime in this process does not reload it: restart fw dev after a build).
        const linked = !fwRoot.split(path.sep).includes('node_modules');
        return {
          // One React for the app and fwjs/react, even when fw is linked from elsewhere (`file:` installs).
          resolve: { dedupe: ['react', 'react-dom'] },
          // Serve fw's own files when it is linked from outside the app, plus the default workspace.
          server: { fs: { allow: [searchForWorkspaceRoot(viteRoot), fwRoot] }, ...(linked ? { watch: { ignored: [`${fwRoot.split(path.sep).join('/')}/dist/**`] } } : {}) },
        };
      },
      async configureServer(server: ViteDevServer) {
        const root = resolveAppRoot(server.config.root, options?.root);
        // `fw dev` shares its runtime; a bare `vite` gets one of its own.
        const shared = claimSharedRuntime(root);
        // A runtime of its own (bare `vite`, `nuxt dev`) exports its spans itself when OTEL_* says so.
        const telemetry = shared ? undefined : await startTelemetry({ serviceName: serviceNameOf(root) });
        const runtime = shared ?? (await createDevRuntime({ root, worker: options?.worker ?? true }).catch((error: unknown) => reportAndRethrow(server, error)));
        if (!shared) {
          let closing: Promise<void> | undefined;
          closeOwnRuntime = () => (closing ??= runtime.close().then(() => telemetry?.shutdown()));
          server.httpServer?.once('close', () => void closeOwnRuntime?.());
        }

        // Mounted before Vite's own middlewares; anything that is not an fw route falls through.
        // Vite 6 (and the 5.4/4.5 backports) ran plugin middlewares ahead of its Host check, so fw's
        // routes check it themselves, against the same server.allowedHosts — and, like Vite, not over
        // HTTPS, which a rebinding page cannot reach under a certificate for another name. A Vite
        // without allowedHosts gets loopback names and IPs only.
        const { allowedHosts = [], https } = server.config.server;
        server.middlewares.use(function fwRuntime(req, res, next) {
          if (!https && !isHostAllowed(req.headers.host, allowedHosts)) {
            res.writeHead(403, { 'content-type': 'application/json; charset=utf-8', 'x-content-type-options': 'nosniff' });
            return void res.end(hostRefusal(req.headers.host, 'Add it to server.allowedHosts in vite.config (or fw dev --allowed-hosts / FW_ALLOWED_HOSTS under fw dev).'));
          }
          runtime.handler(req, res, next);
        });
        watchBackend(server, runtime);
        // A request's server-side failure shows in the overlay too, at the entry's source line (the terminal has it already).
        const stopErrors = runtime.onServerError((error, traceId) => server.ws.send({ type: 'error', err: overlayError(runtime.root, error, traceId) }));
        server.httpServer?.once('close', stopErrors);
        watchFrontend(server, runtime);
        if (options?.typecheck) typecheckInServer(root, server);
      },
    },
  };
});

const fw = fwUnplugin.vite as (options?: FwPluginOptions) => Plugin;
export default fw;

function resolveAppRoot(viteRoot: string, configured: string | undefined): string {
  if (configured) return path.resolve(viteRoot, configured);
  return path.basename(viteRoot) === 'web' ? path.dirname(viteRoot) : viteRoot;
}

function watchBackend(server: ViteDevServer, runtime: DevRuntime): void {
  server.watcher.add([path.join(runtime.root, 'src'), path.join(runtime.root, ROOT_MANIFEST), path.join(runtime.root, REGISTRY_FILE)]);
  const report = reportReloads((outcome, files) => {
    if (outcome.ok) {
      setFwProblem(runtime.root, 'backend', undefined);
      server.config.logger.info(
        reloadedLine(
          files.map((f) => path.relative(runtime.root, f)),
          outcome.migrated,
        ),
        { timestamp: true },
      );
    } else setFwProblem(runtime.root, 'backend', sendOverlay(server, runtime.root, outcome.error));
  });
  server.watcher.on('all', (_event, file) => {
    if (!isBackendSource(runtime.root, file) && !isManifestFile(runtime.root, file)) return;
    report(file, runtime.reload([file]));
  });
}

function reportAndRethrow(server: ViteDevServer, error: unknown): never {
  server.config.logger.error(`fw: ${error instanceof Error ? error.message : String(error)}`);
  throw error;
}

/** Shows a backend failure in Vite's error overlay and the terminal: every diagnostic, its place and its fix. */
function sendOverlay(server: ViteDevServer, root: string, error: unknown): OverlayError {
  const err = overlayError(root, error);
  server.config.logger.error(`fw: ${err.message}`, { timestamp: true });
  server.ws.send({ type: 'error', err });
  return err;
}
