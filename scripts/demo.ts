/**
 * `npm run demo`: creates the minimal-web app in `.demo/` (once) and runs `fw dev` on it with the
 * embedded database. Everything goes through the real `fw` CLI, as a user would run it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(repoRoot, 'dist/cli/bin.js');
const appDir = path.join(repoRoot, '.demo');
const port = process.env.PORT ?? '3100';

function fw(args: string[], cwd: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, stdio: 'inherit' });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('exit', (code) => resolve(code ?? 1));
  });
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
process.exit(await fw(['dev', '--port', port], appDir));
