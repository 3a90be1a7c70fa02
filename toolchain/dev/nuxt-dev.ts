import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FwFailure } from '../../runtime/failure.ts';
import { startApiServer } from '../../plugin/api-server.ts';
import type { DevOptions, DevSession } from './dev-session.ts';
import { writeRuntimeFile } from './runtime-file.ts';

const nuxtConfigFiles = ['nuxt.config.ts', 'nuxt.config.mts', 'nuxt.config.js', 'nuxt.config.mjs'];

/** Whether the app's `web/` is a Nuxt app (it has a nuxt.config). */
export function isNuxtWeb(root: string): boolean {
  return nuxtConfigFiles.some((file) => existsSync(path.join(root, 'web', file)));
}

/**
 * `fw dev` for a Nuxt `web/`: the API runtime on its own port (CORS open to the Nuxt origin), and the
 * app's own `nuxt dev web` as a child process with `NUXT_PUBLIC_FW_URL` pointing at the API, so the
 * page and its server plugin call the runtime directly.
 */
export async function startNuxtDev(root: string, options: DevOptions): Promise<DevSession> {
  if (options.webOnly) {
    throw new FwFailure('bad_flags', '--web-only does not apply to a Nuxt web/: Nuxt calls the runtime at runtimeConfig.public.fwUrl.', {
      suggestions: ['fw dev', 'fw dev --api-only  (then: npx nuxt dev web)'],
    });
  }
  const nuxtBin = resolveNuxtBin(root);
  const host = options.host ?? '127.0.0.1';
  const webPort = await freePort(host, options.webPort ?? 5173);
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const webUrl = `http://${urlHost}:${webPort}`;
  const loopback = host === '127.0.0.1' || host === 'localhost';
  const origins = loopback ? [`http://127.0.0.1:${webPort}`, `http://localhost:${webPort}`] : [webUrl];

  const api = await startApiServer({
    root,
    port: options.port,
    host,
    watch: options.watch ?? true,
    worker: options.worker ?? true,
    cors: { origins },
    // The API port's Host allow-list; Nuxt's own port follows nuxt.config's vite.server.allowedHosts.
    ...(options.allowedHosts !== undefined ? { allowedHosts: options.allowedHosts } : {}),
    ...(options.onReload ? { onReload: options.onReload } : {}),
  });
  let child: ChildProcess | undefined;
  let forget = () => {};
  const close = async () => {
    forget();
    if (child) await stopChild(child);
    await api.close();
  };
  try {
    child = spawn(process.execPath, [nuxtBin, 'dev', 'web', '--port', String(webPort), '--host', host], {
      cwd: root,
      env: { ...process.env, NUXT_PUBLIC_FW_URL: api.url, NUXT_TELEMETRY_DISABLED: '1', PORT: String(webPort), HOST: host },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: closing ends Nuxt and the workers it forks.
      detached: process.platform !== 'win32',
    });
    // Nuxt's output is progress, not a result: stdout stays clean for --json.
    const quiet = options.viteLogLevel === 'warn' || options.viteLogLevel === 'error' || options.viteLogLevel === 'silent';
    let output = '';
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.on('data', (chunk: Buffer) => {
        output = (output + chunk.toString()).slice(-8000);
        if (!quiet || stream === child!.stderr) process.stderr.write(chunk);
      });
    }
    await waitForNuxt(child, webUrl, () => output);
    forget = writeRuntimeFile(root, { serverUrl: api.url, webUrl });
    return { serverUrl: api.url, webUrl, runtime: api.runtime, close };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
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

/** Resolves once Nuxt answers its home page (it serves a 503 loading page while building). */
async function waitForNuxt(child: ChildProcess, webUrl: string, output: () => string): Promise<void> {
  const deadline = Date.now() + 180_000;
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  while (Date.now() < deadline) {
    if (exited !== undefined) {
      throw new FwFailure('web_failed', `nuxt dev exited with ${exited} before serving.\n${output().trim().split('\n').slice(-20).join('\n')}`, {
        suggestions: ['npx nuxt dev web  (see its output)', 'fw dev --api-only'],
      });
    }
    try {
      const response = await fetch(webUrl, { signal: AbortSignal.timeout(30_000) });
      await response.body?.cancel();
      if (response.status < 500) return;
    } catch {}
    await sleep(250);
  }
  throw new FwFailure('web_failed', `nuxt dev did not serve ${webUrl} within 3 minutes.`, { suggestions: ['npx nuxt dev web  (see its output)'] });
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
