/**
 * `npm run demo`: creates the minimal-web app in `.demo/` (once) and runs `fw dev` on it with the
 * embedded database. Everything goes through the real `fw` CLI, as a user would run it.
 *
 * Stopping it stops fw dev, however it is stopped: Ctrl-C, or `kill` (SIGTERM, SIGHUP) of this process
 * or of the npm that ran it (npm passes the signal to the shell that runs this script, which ends
 * without passing it on: this process notices its parent is gone). fw dev runs with an IPC channel and
 * stops when that channel closes, so even a SIGKILL here leaves no server behind.
 *
 * `DEMO_DIR` (default `.demo`), `PORT` (API, default 3100) and `WEB_PORT` (default 5173) move it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(repoRoot, 'dist/cli/bin.js');
const appDir = path.resolve(repoRoot, process.env.DEMO_DIR ?? '.demo');
const port = process.env.PORT ?? '3100';
const webPort = process.env.WEB_PORT ?? '5173';
const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const parent = process.ppid;

function fw(args: string[], cwd: string): Promise<number> {
  return new Promise((resolve) => {
    // A process group of its own: a Ctrl-C reaches it once, forwarded from here, not also from the terminal.
    const child = spawn(process.execPath, [cli, ...args], { cwd, stdio: ['inherit', 'inherit', 'inherit', 'ipc'], detached: true });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    for (const signal of signals) process.on(signal, forward);
    // Orphaned (npm or its shell was killed): stop the child as a Ctrl-C would.
    const orphaned = setInterval(() => {
      if (!alive(parent)) child.kill('SIGTERM');
    }, 250);
    child.on('exit', (code) => {
      clearInterval(orphaned);
      for (const s of signals) process.off(s, forward);
      resolve(code ?? 1);
    });
  });
}

/** Whether a process exists (`process.ppid` is read once, at start: it does not change when orphaned). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

if (!existsSync(path.join(appDir, 'package.json'))) {
  const code = await fw(['create', appDir, '--template', 'minimal-web', '--install'], repoRoot);
  if (code !== 0) process.exit(code);
}
console.error(`
Try it (dev auth headers identify a user and tenant):
  curl -s -X POST http://127.0.0.1:${port}/commands/createNote -H 'content-type: application/json' \\
    -H 'x-fw-user-id: demo' -H 'x-fw-tenant-id: 00000000-0000-4000-8000-000000000001' \\
    -d '{"args":{"title":"Hello fw"}}'
  curl -s -X POST http://127.0.0.1:${port}/queries/listNotes \\
    -H 'x-fw-user-id: demo' -H 'x-fw-tenant-id: 00000000-0000-4000-8000-000000000001'
`);
process.exit(await fw(['dev', '--port', port, '--web-port', webPort], appDir));
