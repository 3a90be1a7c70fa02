import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const cliPath = path.join(repoRoot, 'dist/cli/bin.js');

/**
 * A throwaway copy of a template with `node_modules/fwjs` linked to this checkout (what `fw create`
 * plus `npm install` would give, without the network), plus any extra files. With `insideRepo` it
 * lives under `.test-apps/`, so its web dependencies (React, Vite) resolve from this checkout's
 * node_modules.
 */
export async function createTestApp(
  template = 'minimal-web',
  files: Record<string, string> = {},
  options: { insideRepo?: boolean } = {},
): Promise<{ dir: string; remove(): Promise<void> }> {
  const parent = options.insideRepo ? path.join(repoRoot, '.test-apps') : tmpdir();
  await mkdir(parent, { recursive: true });
  const dir = await mkdtemp(path.join(parent, 'fw-app-'));
  await cp(path.join(repoRoot, 'templates', template), dir, { recursive: true });
  await mkdir(path.join(dir, 'node_modules'), { recursive: true });
  await symlink(repoRoot, path.join(dir, 'node_modules', 'fwjs'), 'dir');
  // The template's own dependencies that fw depends on too (b2b-support-web signs tokens with jose):
  // an install has them whatever the folder, so they resolve outside the checkout as well.
  const own = (JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {};
  const fws = (JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {};
  for (const name of Object.keys(own).filter((dependency) => dependency !== 'fwjs' && dependency in fws)) {
    await mkdir(path.dirname(path.join(dir, 'node_modules', name)), { recursive: true });
    await symlink(path.join(repoRoot, 'node_modules', name), path.join(dir, 'node_modules', name), 'dir');
  }
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A copy of a test app in a new directory beside it, for a test that changes files or state the
 * others read. The app's local state (`.fw/`: database, recorded test run) stays behind, and so do the
 * `skip` paths (relative to the app). `linkNodeModules` links the copy's node_modules to the
 * original's instead of copying it (an installed app).
 */
export async function copyTestApp(
  from: string,
  options: { skip?: string[]; linkNodeModules?: boolean } = {},
): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(path.dirname(from), 'fw-app-'));
  const skipped = new Set(['.fw', ...(options.skip ?? []), ...(options.linkNodeModules ? ['node_modules'] : [])].map((p) => path.join(from, p)));
  await cp(from, dir, { recursive: true, filter: (source) => !skipped.has(source) });
  if (options.linkNodeModules) await symlink(path.join(from, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a child process: this one's, but with AI on fw's scripted mock (`FW_AI=mock`)
 * and no provider key, so no test needs one or spends one. An npm it runs (`fw create --install`)
 * takes what npm's cache has before asking the registry: the templates' locks name exact versions
 * with their integrity, so a cached tarball is the one asked for, and a run needs the registry only
 * for what the cache lacks. A test's own `env` wins.
 */
function childEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const { AI_GATEWAY_API_KEY: _providerKey, ...inherited } = process.env;
  return { ...inherited, FW_AI: 'mock', npm_config_prefer_offline: 'true', ...env };
}

/** Runs `fw …` to completion. */
export function runFw(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<RunResult> {
  // fw check's typecheck costs seconds of CPU per run on a 2-core machine; only the tests of it (which
  // say --typecheck) run it.
  if (args[0] === 'check' && !args.includes('--typecheck') && !args.includes('--no-typecheck')) args = [...args, '--no-typecheck'];
  return runNode([cliPath, ...args], options);
}

/** Runs a Node script (with this Node) to completion. */
export function runNode(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: options.cwd, env: childEnv(options.env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface RunningFw {
  child: ChildProcess;
  /** The JSON line the process printed once serving. */
  ready: Record<string, unknown>;
  stderr(): string;
  stop(): Promise<number | null>;
}

/** Starts a long-running `fw …` that prints one JSON line when ready (`fw dev --json`). */
export function startFw(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<RunningFw> {
  // fw dev's background typecheck costs seconds of CPU per start on a 2-core machine; only the tests
  // of it (which say --typecheck) run it.
  if (args[0] === 'dev' && !args.includes('--typecheck') && !args.includes('--no-typecheck')) args = [...args, '--no-typecheck'];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { cwd: options.cwd, env: childEnv(options.env) });
    let stdout = '';
    let stderr = '';
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`fw ${args.join(' ')} did not become ready in time.\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d) => {
      stdout += d;
      const line = stdout.split('\n').find((l) => l.trim().startsWith('{'));
      if (line && stdout.includes('\n')) {
        clearTimeout(timer);
        const ready = JSON.parse(line) as Record<string, unknown>;
        resolve({
          child,
          ready,
          stderr: () => stderr,
          async stop() {
            if (child.exitCode === null) child.kill('SIGTERM');
            return exited;
          },
        });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`fw ${args.join(' ')} exited with ${code} before it was ready.\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

/** POSTs `{ args }` JSON to the runtime. */
export async function post(baseUrl: string, route: string, args: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(new URL(route, baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ args }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}
