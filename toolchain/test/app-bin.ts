import { spawn, type StdioOptions } from 'node:child_process';
import type { Readable } from 'node:stream';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fwPackageRoot } from '../../plugin/package-root.ts';
import { childEnvironment } from '../../runtime/config/environment.ts';

/** A package's command-line script, and whether it is the app's own copy or fw's. */
export interface PackageBin {
  /** The script to run with Node. */
  file: string;
  from: 'app' | 'fw';
  version: string;
}

/**
 * Finds `pkg`'s `bin` script the way the app would (`node_modules/` from `root` upwards); with
 * `fallbackToFw`, fw's own copy when the app has none. Undefined when neither has it.
 *
 * @example
 *   resolvePackageBin(root, 'typescript', 'tsc', { fallbackToFw: true }) // { file: '…/typescript/bin/tsc', from: 'app', … }
 */
export function resolvePackageBin(root: string, pkg: string, bin: string, options: { fallbackToFw?: boolean } = {}): PackageBin | undefined {
  const own = findBin(root, pkg, bin);
  if (own) return { ...own, from: 'app' };
  if (!options.fallbackToFw) return undefined;
  const fw = findBin(fwPackageRoot(), pkg, bin);
  return fw ? { ...fw, from: 'fw' } : undefined;
}

function findBin(start: string, pkg: string, bin: string): Omit<PackageBin, 'from'> | undefined {
  for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'node_modules', pkg, 'package.json');
    if (existsSync(manifest)) {
      const json = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string; bin?: string | Record<string, string> };
      const relative = typeof json.bin === 'string' ? json.bin : json.bin?.[bin];
      if (relative) return { file: path.join(path.dirname(manifest), relative), version: json.version ?? '' };
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

export interface NodeScriptOptions {
  cwd: string;
  /** The child's whole environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /**
   * `capture` (default) collects stdout and stderr; `stderr` sends both to this process's stderr;
   * `lines` hands each line to `onLine` as it comes (and keeps nothing).
   */
  output?: 'capture' | 'stderr' | 'inherit' | 'lines';
  onLine?(line: string, stream: 'stdout' | 'stderr'): void;
  /** Opens a pipe as the child's fd 3 and hands each line written to it here (fw test's progress events). */
  onFd3Line?(line: string): void;
}

export interface NodeScriptResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a Node script with this Node to completion. A signal-killed child reports code 1. SIGINT and
 * SIGTERM sent to this process are passed on to the child, which is waited for: stopping `fw test
 * --watch` by its pid must not leave Vitest running.
 */
export function runNodeScript(file: string, args: readonly string[], options: NodeScriptOptions): Promise<NodeScriptResult> {
  const output = options.output ?? 'capture';
  const base: StdioOptions = output === 'capture' ? ['ignore', 'pipe', 'pipe'] : output === 'lines' ? ['inherit', 'pipe', 'pipe'] : output === 'stderr' ? ['inherit', 2, 2] : ['inherit', 'inherit', 'inherit'];
  const stdio: StdioOptions = options.onFd3Line ? [...base, 'pipe'] : base;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file, ...args], { cwd: options.cwd, env: options.env ?? childEnvironment(), stdio });
    if (output === 'lines') {
      eachLine(child.stdout!, (line) => options.onLine?.(line, 'stdout'));
      eachLine(child.stderr!, (line) => options.onLine?.(line, 'stderr'));
    }
    if (options.onFd3Line) eachLine(child.stdio[3] as Readable, options.onFd3Line);
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    const signals = ['SIGINT', 'SIGTERM'] as const;
    for (const signal of signals) process.on(signal, forward);
    const stopForwarding = () => {
      for (const signal of signals) process.off(signal, forward);
    };
    let stdout = '';
    let stderr = '';
    if (output === 'capture') {
      child.stdout?.on('data', (d) => (stdout += d));
      child.stderr?.on('data', (d) => (stderr += d));
    }
    child.on('error', (error) => {
      stopForwarding();
      reject(error);
    });
    child.on('close', (code) => {
      stopForwarding();
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}

/** Calls `fn` with each line of `stream` as it comes (the last one even without a newline). */
function eachLine(stream: Readable, fn: (line: string) => void): void {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop()!;
    for (const line of lines) fn(line);
  });
  stream.on('end', () => {
    if (rest) fn(rest);
    rest = '';
  });
}
