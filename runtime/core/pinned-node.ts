import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { unsupportedNodeMessage } from './node-version.ts';

/**
 * An app's own Node.js — the `node` devDependency its template pins (node_modules/.bin/node) — found
 * from the first of `from` that is inside such an app (walking up), when it is one fw supports. Kept to
 * node's built-ins: `bin.ts` calls it on a Node older than fw supports, before loading anything else.
 */
export function findPinnedNode(from: string[]): { path: string; version: string } | undefined {
  for (const start of from) {
    for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
      const candidate = path.join(dir, 'node_modules', '.bin', process.platform === 'win32' ? 'node.cmd' : 'node');
      if (existsSync(candidate)) {
        try {
          const version = execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
          if (unsupportedNodeMessage(version) === undefined) return { path: candidate, version };
        } catch {
          // Not runnable here (another platform's binary): look further up.
        }
      }
      if (path.dirname(dir) === dir) break;
    }
  }
  return undefined;
}

/** Set in the child of {@link runOnPinnedNode}: a pinned Node that still looked too old never loops. */
export const REEXEC_MARK = 'FW_REEXEC_PINNED_NODE';

/**
 * Runs this same command (`process.argv` after the Node binary) on `node`, with the terminal, and
 * resolves with its exit code; SIGINT, SIGTERM and SIGHUP are passed on (a stopped `fw dev` stops).
 */
export function runOnPinnedNode(node: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(node, process.argv.slice(1), { stdio: 'inherit', env: { ...process.env, [REEXEC_MARK]: '1' } });
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
    child.on('error', () => resolve(1));
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 + 1 : 1)));
  });
}
