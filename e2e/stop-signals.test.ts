import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { connect } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, repoRoot, startFw } from './support/app.ts';
import { until } from './support/until.ts';

// However fw dev is stopped, its ports are freed: `npm run demo` killed by pid (npm ends the shell that
// runs the script, which passes nothing on), the demo script itself killed (even by SIGKILL: fw dev
// follows its IPC channel out), and fw dev sent SIGHUP (its terminal closed).

const demoScript = path.join(repoRoot, 'scripts/demo.ts');

/** Whether nothing listens on `port` any more (a connection is refused). */
function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

async function untilFreed(ports: number[]): Promise<void> {
  for (const port of ports) await until(() => refuses(port), `port ${port} to be freed`, { timeoutMs: 20_000 });
}

const started: ChildProcess[] = [];
const removals: Array<() => Promise<void>> = [];

afterEach(async () => {
  // Whatever a failed test left running, by its own pid.
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const remove of removals.splice(0)) await remove();
});

/**
 * Runs the demo script on a test app as `npm run demo` does (`sh -c "… && node scripts/demo.ts"`, a
 * shell that cannot hand over to node), on free ports; resolves once fw dev says where it serves.
 */
async function startDemo(): Promise<{ shell: ChildProcess; ports: number[]; demoPid(): number; output(): string }> {
  const app = await createTestApp('minimal-web', {}, { insideRepo: true });
  removals.push(app.remove);
  const shell = spawn('sh', ['-c', `true && "${process.execPath}" "${demoScript}"`], {
    cwd: repoRoot,
    env: { ...process.env, DEMO_DIR: app.dir, PORT: '0', WEB_PORT: '0', DATABASE_URL: '', FW_AI: 'mock' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(shell);
  let output = '';
  shell.stdout!.on('data', (d) => (output += d));
  shell.stderr!.on('data', (d) => (output += d));
  const serving = await until(async () => /fw dev: web on http:\/\/127\.0\.0\.1:(\d+), API on http:\/\/127\.0\.0\.1:(\d+)/.exec(output) ?? (shell.exitCode !== null ? Promise.reject(new Error(`the demo exited: ${output}`)) : undefined), 'the demo to serve', { timeoutMs: 90_000 });
  const ports = [Number(serving[1]), Number(serving[2])];
  for (const port of ports) expect(await refuses(port)).toBe(false);
  // The demo's node: the shell's only child.
  const demoPid = Number(execFileSync('pgrep', ['-P', String(shell.pid)], { encoding: 'utf8' }).trim().split('\n')[0]);
  expect(Number.isInteger(demoPid) && demoPid > 0).toBe(true);
  return { shell, ports, demoPid: () => demoPid, output: () => output };
}

function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm run demo stops fw dev however it is killed', () => {
  it('killing the shell npm runs it in (what killing npm does) frees both ports, and the demo ends', async () => {
    const demo = await startDemo();
    demo.shell.kill('SIGTERM');
    await untilFreed(demo.ports);
    await until(async () => !exists(demo.demoPid()), 'the demo process to end');
  }, 150_000);

  it('SIGTERM to the demo process frees both ports', async () => {
    const demo = await startDemo();
    process.kill(demo.demoPid(), 'SIGTERM');
    await untilFreed(demo.ports);
    await until(async () => demo.shell.exitCode !== null, 'the demo to exit');
  }, 150_000);

  it('SIGKILL to the demo process frees both ports: fw dev follows its closed IPC channel out', async () => {
    const demo = await startDemo();
    process.kill(demo.demoPid(), 'SIGKILL');
    await untilFreed(demo.ports);
  }, 150_000);
});

describe('fw dev stops on SIGHUP', () => {
  it('frees the API port and exits 0 when its terminal closes', async () => {
    const app = await createTestApp('minimal-web');
    removals.push(app.remove);
    const dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir, env: { DATABASE_URL: '' } });
    started.push(dev.child);
    const port = Number(new URL(dev.ready.serverUrl as string).port);
    const exited = new Promise<number | null>((resolve) => dev.child.once('exit', (code) => resolve(code)));
    dev.child.kill('SIGHUP');
    await untilFreed([port]);
    expect(await exited).toBe(0);
  }, 120_000);
});
