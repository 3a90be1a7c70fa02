import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Where a running `fw dev` says it serves, so other commands (`fw live …`) can find it. */
export interface RuntimeFile {
  serverUrl?: string;
  webUrl?: string;
  pid: number;
}

function runtimeFilePath(root: string): string {
  return path.join(root, '.fw', 'runtime.json');
}

/** Records the serving addresses; returns a function that removes the record (if still ours). */
export function writeRuntimeFile(root: string, info: Omit<RuntimeFile, 'pid'>): () => void {
  const file = runtimeFilePath(root);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ ...info, pid: process.pid }, null, 2)}\n`);
  return () => {
    if (readRuntimeFile(root)?.pid === process.pid) rmSync(file, { force: true });
  };
}

/** The record of a running `fw dev` for this app, if its process is still alive. */
export function readRuntimeFile(root: string): RuntimeFile | undefined {
  let info: RuntimeFile;
  try {
    info = JSON.parse(readFileSync(runtimeFilePath(root), 'utf8')) as RuntimeFile;
  } catch {
    return undefined;
  }
  try {
    process.kill(info.pid, 0);
  } catch (error) {
    // EPERM: alive but not ours to signal; anything else: gone.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  return info;
}
