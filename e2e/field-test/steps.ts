import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** One command of a field test, as the report keeps it. */
export interface StepResult {
  name: string;
  /** The command line, for a human to re-run it. */
  command: string;
  cwd: string;
  durationMs: number;
  /** null when it was killed (timeout) or never started. */
  exitCode: number | null;
  timedOut: boolean;
  timeoutMs: number;
  ok: boolean;
  /** The last characters of each stream: enough to see what went wrong. */
  stdout: string;
  stderr: string;
}

export interface StepCommand {
  name: string;
  argv: readonly string[];
  cwd: string;
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
}

const snippetChars = 4_000;

/** The tail of a stream's output, cut on a character boundary. */
export function snippet(text: string): string {
  return text.length <= snippetChars ? text : `…${text.slice(-snippetChars)}`;
}

/** `a b "c d"` — how a human would type argv. */
export function commandLine(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
}

/**
 * Runs a command to completion with a timeout. On timeout the whole process group is killed (npm
 * and pnpm start children), so nothing outlives the step.
 */
export function runStep(step: StepCommand): Promise<StepResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const child = spawn(step.argv[0]!, step.argv.slice(1), { cwd: step.cwd, env: { ...process.env, ...step.env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => (stdout = keepTail(stdout + d.toString('utf8'))));
    child.stderr.on('data', (d: Buffer) => (stderr = keepTail(stderr + d.toString('utf8'))));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, step.timeoutMs);
    const finish = (exitCode: number | null, error?: Error) => {
      clearTimeout(timer);
      resolve({
        name: step.name,
        command: commandLine(step.argv),
        cwd: step.cwd,
        durationMs: Math.round(performance.now() - started),
        exitCode,
        timedOut,
        timeoutMs: step.timeoutMs,
        ok: !timedOut && exitCode === 0 && !error,
        stdout: snippet(stdout),
        stderr: snippet(error ? `${stderr}${error.message}` : stderr),
      });
    };
    child.once('error', (error) => finish(null, error));
    child.once('close', (code) => finish(timedOut ? null : code));
  });
}

/** A long-running process (the dev server) whose first JSON line on stdout says it is ready. */
export interface ServerProcess {
  step: StepResult;
  ready: Record<string, unknown> | undefined;
  stop(): Promise<void>;
}

export function startServer(step: StepCommand): Promise<ServerProcess> {
  const started = performance.now();
  const child = spawn(step.argv[0]!, step.argv.slice(1), { cwd: step.cwd, env: { ...process.env, ...step.env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = keepTail(stderr + d.toString('utf8'))));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('close', r));
    killGroup(child, 'SIGTERM');
    const forced = setTimeout(() => killGroup(child, 'SIGKILL'), 5_000);
    await exited;
    clearTimeout(forced);
  };
  return new Promise((resolve) => {
    let settled = false;
    const result = (ready: Record<string, unknown> | undefined, timedOut: boolean, exitCode: number | null): StepResult => ({
      name: 'start-server',
      command: commandLine(step.argv),
      cwd: step.cwd,
      durationMs: Math.round(performance.now() - started),
      exitCode,
      timedOut,
      timeoutMs: step.timeoutMs,
      ok: ready !== undefined && ready.ok !== false,
      stdout: snippet(stdout),
      stderr: snippet(stderr),
    });
    const settle = (ready: Record<string, unknown> | undefined, timedOut: boolean, exitCode: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ step: result(ready, timedOut, exitCode), ready, stop });
    };
    const timer = setTimeout(() => {
      void stop();
      settle(undefined, true, null);
    }, step.timeoutMs);
    createInterface({ input: child.stdout }).on('line', (line) => {
      stdout = keepTail(`${stdout}${line}\n`);
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (typeof parsed === 'object' && parsed !== null) settle(parsed, false, null);
      } catch {
        // Not the ready line.
      }
    });
    child.once('error', (error) => {
      stderr += error.message;
      settle(undefined, false, null);
    });
    child.once('close', (code) => settle(undefined, false, code));
  });
}

function keepTail(text: string): string {
  return text.length > snippetChars * 4 ? text.slice(-snippetChars * 2) : text;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}
