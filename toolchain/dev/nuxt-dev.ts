import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FwFailure } from '../../runtime/core/failure.ts';
import { startApiServer } from '../../plugin/dev-server/api-server.ts';
import { nuxtConfigFile } from '../../plugin/nuxt-web.ts';
import { NUXT_TYPECHECK_ENV, NUXT_WORKER_ENV } from '../../plugin/nuxt-module.ts';
import { type DevOptions, type DevSession, type DevSummary, summarise } from './dev-session.ts';
import { writeRuntimeFile } from './runtime-file.ts';
import { childEnvironment } from '../../runtime/config/environment.ts';

/** fw's Nuxt module, as web/nuxt.config names it in `modules`. */
export const FW_NUXT_MODULE = 'fwjs/nuxt/module';

/** Whether web/nuxt.config names fw's Nuxt module (read as text: loading the config would run it). */
export function usesFwNuxtModule(root: string): boolean {
  const file = nuxtConfigFile(root);
  if (!file) return false;
  const text = readFileSync(file, 'utf8');
  return text.includes(`'${FW_NUXT_MODULE}'`) || text.includes(`"${FW_NUXT_MODULE}"`);
}

/**
 * `fw dev` for a Nuxt `web/`: the app's own `nuxt dev web` as a child process. With fw's Nuxt module
 * in nuxt.config (the templates have it), Nuxt's Vite runs the fw plugin: the runtime answers on Nuxt's
 * origin, web/ edits are analysed with diagnostics in the terminal and the overlay — the same loop as a
 * Vite web/. Without it, the runtime gets a port of its own (CORS open to Nuxt's origin) and
 * `NUXT_PUBLIC_FW_URL` points the app at it.
 */
export async function startNuxtDev(root: string, options: DevOptions): Promise<DevSession> {
  const nuxtBin = resolveNuxtBin(root);
  const host = options.host ?? '127.0.0.1';
  const webPort = await freePort(host, options.webPort ?? 5173);
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const webUrl = `http://${urlHost}:${webPort}`;
  const worker = options.worker ?? true;
  const quiet = options.viteLogLevel === 'warn' || options.viteLogLevel === 'error' || options.viteLogLevel === 'silent';
  const nuxtEnv = { NUXT_TELEMETRY_DISABLED: '1', PORT: String(webPort), HOST: host };

  if (usesFwNuxtModule(root)) {
    // The module's Vite plugin typechecks too: Nuxt's overlay lives in that process (typecheck-overlay.ts).
    const typecheck = options.typecheck ?? true;
    options.onStep?.('starting nuxt dev (it loads the app)');
    const nuxt = startNuxt(nuxtBin, root, webPort, host, { ...nuxtEnv, [NUXT_WORKER_ENV]: worker ? '1' : '0', [NUXT_TYPECHECK_ENV]: typecheck ? '1' : '0' }, quiet);
    try {
      // Ready when the runtime answers on Nuxt's origin: the module's Vite plugin has loaded the app.
      const summary = await waitForNuxt(nuxt, `${webUrl}/health`, async (response) => runtimeSummary(webUrl, response, worker));
      const forget = writeRuntimeFile(root, { serverUrl: webUrl, webUrl });
      return {
        serverUrl: webUrl,
        webUrl,
        summary,
        typechecksItself: true,
        close: async () => {
          forget();
          await stopChild(nuxt.child);
        },
      };
    } catch (error) {
      await stopChild(nuxt.child);
      throw error;
    }
  }

  if (options.webOnly) {
    throw new FwFailure('bad_flags', `--web-only needs fw's Nuxt module in web/nuxt.config (modules: ['${FW_NUXT_MODULE}']); without it Nuxt calls the runtime at runtimeConfig.public.fwUrl.`, {
      suggestions: [`add modules: ['${FW_NUXT_MODULE}'] to web/nuxt.config.ts`, 'fw dev', 'fw dev --api-only  (then: npx nuxt dev web)'],
    });
  }
  process.stderr.write(
    `fw: web/nuxt.config has no modules: ['${FW_NUXT_MODULE}'] — the runtime gets a port of its own and web/ edits are not analysed. Add the module for the Vite loop (runtime on Nuxt's origin, diagnostics in the overlay).\n`,
  );
  const loopback = host === '127.0.0.1' || host === 'localhost';
  const origins = loopback ? [`http://127.0.0.1:${webPort}`, `http://localhost:${webPort}`] : [webUrl];
  const api = await startApiServer({
    root,
    port: options.port,
    host,
    watch: options.watch ?? true,
    worker,
    cors: { origins },
    // The API port's Host allow-list; Nuxt's own port follows nuxt.config's vite.server.allowedHosts.
    ...(options.allowedHosts !== undefined ? { allowedHosts: options.allowedHosts } : {}),
    ...(options.onReload ? { onReload: options.onReload } : {}),
    ...(options.onStep ? { onStep: options.onStep } : {}),
  });
  let nuxt: RunningNuxt | undefined;
  let forget = () => {};
  const close = async () => {
    forget();
    if (nuxt) await stopChild(nuxt.child);
    await api.close();
  };
  try {
    options.onStep?.('starting nuxt dev');
    nuxt = startNuxt(nuxtBin, root, webPort, host, { ...nuxtEnv, NUXT_PUBLIC_FW_URL: api.url }, quiet);
    // Nuxt serves a 503 loading page while it builds.
    await waitForNuxt(nuxt, webUrl, async () => true);
    forget = writeRuntimeFile(root, { serverUrl: api.url, webUrl });
    return { serverUrl: api.url, webUrl, runtime: api.runtime, summary: summarise(api.runtime), close };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}

interface RunningNuxt {
  child: ChildProcess;
  /** Nuxt's last output (for a failure). */
  output(): string;
}

function startNuxt(nuxtBin: string, root: string, port: number, host: string, env: Record<string, string>, quiet: boolean): RunningNuxt {
  const child = spawn(process.execPath, [nuxtBin, 'dev', 'web', '--port', String(port), '--host', host], {
    cwd: root,
    env: childEnvironment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: closing ends Nuxt and the workers it forks.
    detached: process.platform !== 'win32',
  });
  // Nuxt's output is progress (and, with the module, fw's diagnostics on stderr), not a result: stdout stays clean for --json.
  let output = '';
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8000);
      if (!quiet || stream === child.stderr) process.stderr.write(chunk);
    });
  }
  return { child, output: () => output };
}

/** What the runtime on Nuxt's origin reports: its database from /health, its entries from /entries. */
async function runtimeSummary(webUrl: string, health: Response, worker: boolean): Promise<DevSummary | undefined> {
  const body = (await health.json().catch(() => undefined)) as { status?: string; database?: string } | undefined;
  if (body?.status !== 'ok' || typeof body.database !== 'string') return undefined;
  const entries = (await (await fetch(`${webUrl}/entries`, { signal: AbortSignal.timeout(30_000) })).json()) as { entries?: unknown[] };
  return { database: body.database, entries: entries.entries?.length ?? 0, worker };
}

/** The app's own Nuxt CLI (`nuxt/bin/nuxt.mjs`). */
function resolveNuxtBin(root: string): string {
  try {
    const pkg = createRequire(path.join(root, 'package.json')).resolve('nuxt/package.json');
    return path.join(path.dirname(pkg), 'bin', 'nuxt.mjs');
  } catch (cause) {
    throw new FwFailure('nuxt_missing', `web/ is a Nuxt app but ${root} has no nuxt installed.`, {
      suggestions: [`cd ${root} && npm install`, 'npm install nuxt vue vue-router'],
      cause,
    });
  }
}

/** `port` when free, else the next free one (0: any free port). */
async function freePort(host: string, port: number): Promise<number> {
  for (let candidate = port, tries = 0; tries < 50; candidate++, tries++) {
    const bound = await new Promise<number | undefined>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(undefined));
      server.listen(candidate, host, () => {
        const address = server.address();
        const chosen = typeof address === 'object' && address ? address.port : candidate;
        server.close(() => resolve(chosen));
      });
    });
    if (bound !== undefined) return bound;
    if (port === 0) break;
  }
  throw new FwFailure('port_busy', `No free web port from ${port} on ${host}.`, { suggestions: ['fw dev --web-port 0'] });
}

/**
 * Polls `url` until Nuxt answers it below 500 and `accept` makes something of the answer (Nuxt serves
 * a 503 loading page while it builds); fails with Nuxt's last output when it exits first.
 */
async function waitForNuxt<T>(nuxt: RunningNuxt, url: string, accept: (response: Response) => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 180_000;
  let exited: number | null | undefined;
  nuxt.child.once('exit', (code) => (exited = code));
  while (Date.now() < deadline) {
    if (exited !== undefined) {
      throw new FwFailure('web_failed', `nuxt dev exited with ${exited} before serving.\n${nuxt.output().trim().split('\n').slice(-20).join('\n')}`, {
        suggestions: ['npx nuxt dev web  (see its output)', 'fw dev --api-only'],
      });
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
      if (response.status < 500) {
        const accepted = await accept(response);
        if (accepted !== undefined) return accepted;
      }
      await response.body?.cancel().catch(() => undefined);
    } catch {}
    await sleep(250);
  }
  throw new FwFailure('web_failed', `nuxt dev did not serve ${url} within 3 minutes.`, {
    suggestions: ['npx nuxt dev web  (see its output)', `check that web/nuxt.config lists '${FW_NUXT_MODULE}' in modules (it serves the runtime)`],
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = (name: NodeJS.Signals) => {
    try {
      if (process.platform !== 'win32' && child.pid) process.kill(-child.pid, name);
      else child.kill(name);
    } catch {}
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
