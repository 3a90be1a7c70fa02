import { FwFailure } from '../runtime/core/failure.ts';
import { formatFix } from '../plugin/analyse/check-diagnostic.ts';
import { toFailureDiagnostics } from '../plugin/analyse/failure-diagnostics.ts';
import { AppLoadError } from '../plugin/app-load-error.ts';
import { resolveConfig } from '../runtime/config/resolve-config.ts';

/** Prints one JSON document on stdout (the only thing `--json` prints there). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** Progress and logs go to stderr so stdout stays machine-readable. */
export function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

export interface FailureReport {
  ok: false;
  kind: string;
  message: string;
  suggestions: string[];
  diagnostics?: unknown[];
}

export function toFailureReport(error: unknown): FailureReport {
  if (error instanceof FwFailure) {
    return {
      ok: false,
      kind: error.kind,
      message: error.message,
      suggestions: error.suggestions,
      ...(error.diagnostics.length > 0 ? { diagnostics: error.diagnostics } : {}),
    };
  }
  if (error instanceof AppLoadError) {
    return {
      ok: false,
      kind: 'app_invalid',
      message: error.message,
      suggestions: ['Fix the files named above; fw reloads them on the next start.'],
      diagnostics: toFailureDiagnostics(error).map(({ severity: _, ...d }) => d),
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { ok: false, kind: 'internal', message, suggestions: ['Run again with FW_DEBUG=1 for a stack trace.'] };
}

export function printFailure(error: unknown, json: boolean): void {
  const report = toFailureReport(error);
  if (json) {
    printJson(report);
    return;
  }
  log(`✖ ${report.message}`);
  for (const d of (report.diagnostics ?? []) as Array<{ path?: string; message?: string; hint?: string; suggestedCommand?: string; file?: string; line?: number; column?: number }>) {
    // A diagnostic that knows its place (a schema change: the schema file's line) says it, as file:line:column.
    const where = d.file ? ` (${d.file}${d.line ? `:${d.line}:${d.column ?? 1}` : ''})` : '';
    log(`  • ${d.path ? `${d.path}${where}: ` : ''}${d.message ?? ''}`);
    for (const line of formatFix(d, '    ')) log(line);
  }
  for (const s of report.suggestions) log(`  → ${s}`);
  if (debugging() && error instanceof Error && error.stack) log(error.stack);
}

/** Why a long-running command stops: a signal, or the parent that started it with an IPC channel went away. */
export type StopReason = NodeJS.Signals | 'parent exited';

const stopSignals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Resolves when the process is asked to stop: Ctrl-C, a supervisor's SIGTERM, its terminal closing
 * (SIGHUP), or, when its parent started it with an IPC channel (`npm run demo`, a supervisor written in
 * Node), that channel closing because the parent died, even by SIGKILL. Once it has resolved, a second
 * signal (a second later or more) ends the process at once, so a shutdown that hangs can be cut.
 */
export function untilSignal(): Promise<StopReason> {
  return new Promise((resolve) => {
    const stop = (reason: StopReason) => {
      for (const signal of stopSignals) process.off(signal, stop);
      process.off('disconnect', parentGone);
      const first = Date.now();
      // The same stop often arrives twice (the terminal and a parent that forwards it): a repeat within a
      // second is that; a later one ends the process at once, as if fw had not listened.
      const again = (signal: NodeJS.Signals) => {
        if (Date.now() - first < 1000) return;
        for (const s of stopSignals) process.off(s, again);
        process.kill(process.pid, signal);
      };
      for (const signal of stopSignals) process.on(signal, again);
      resolve(reason);
    };
    const parentGone = () => stop('parent exited');
    for (const signal of stopSignals) process.on(signal, stop);
    if (process.channel) {
      // Only watched: the channel must not keep the process alive by itself.
      process.channel.unref();
      process.once('disconnect', parentGone);
      if (!process.connected) parentGone();
    }
  });
}

/** `FW_DEBUG`: read while reporting a failure, so a malformed value must not become another one. */
function debugging(): boolean {
  try {
    return resolveConfig().get('FW_DEBUG');
  } catch {
    return false;
  }
}
