import { FwFailure } from '../runtime/core/failure.ts';
import { formatFix } from '../plugin/analyse/check-diagnostic.ts';
import { toFailureDiagnostics } from '../plugin/failure-diagnostics.ts';
import { AppLoadError } from '../plugin/load-app.ts';
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

/** Resolves when the process is asked to stop (Ctrl-C or a supervisor's SIGTERM). */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
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
