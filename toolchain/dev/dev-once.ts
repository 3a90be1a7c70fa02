import type { Diagnostic } from '../../runtime/core/errors.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { toFailureDiagnostics } from '../../plugin/analyse/failure-diagnostics.ts';
import { AppLoadError } from '../../plugin/app-load-error.ts';
import { startApiServer } from '../../plugin/dev-server/api-server.ts';

export interface DevOnceStep {
  name: string;
  ok: boolean;
  durationMs: number;
  error?: string;
  /** For a failed step: its code (`database_locked`, `app_invalid`, …) and the commands or fixes to try. */
  code?: string;
  suggestions?: string[];
}

export interface DevOnceReport {
  ok: boolean;
  steps: DevOnceStep[];
  diagnostics: Array<Diagnostic & { severity: 'error' | 'warning' | 'info' }>;
  serverUrl?: string;
  health?: unknown;
}

function failureAdvice(error: unknown): { code: string; suggestions: string[] } {
  if (error instanceof FwFailure) return { code: error.kind, suggestions: error.suggestions.length > 0 ? error.suggestions : ['fw dev --once --json'] };
  if (error instanceof AppLoadError) return { code: 'app_invalid', suggestions: ['Fix the files named in diagnostics, then: fw dev --once'] };
  return { code: 'internal', suggestions: ['Run again with FW_DEBUG=1 for a stack trace.'] };
}

/**
 * `fw dev --once`: load the app, migrate, generate, serve on a free port, probe `GET /health`, stop.
 * Never throws for a broken app: the report says which step failed and why.
 */
export async function runDevOnce(options: { root: string }): Promise<DevOnceReport> {
  const steps: DevOnceStep[] = [];
  const diagnostics: DevOnceReport['diagnostics'] = [];
  const step = async <T>(name: string, fn: () => Promise<T>): Promise<T | undefined> => {
    const started = performance.now();
    try {
      const value = await fn();
      steps.push({ name, ok: true, durationMs: Math.round(performance.now() - started) });
      return value;
    } catch (error) {
      steps.push({
        name,
        ok: false,
        durationMs: Math.round(performance.now() - started),
        error: error instanceof Error ? error.message : String(error),
        ...failureAdvice(error),
      });
      diagnostics.push(...toFailureDiagnostics(error));
      return undefined;
    }
  };

  const server = await step('start (load, migrate, generate, listen)', () => startApiServer({ root: options.root, port: 0 }));
  if (!server) return { ok: false, steps, diagnostics };
  diagnostics.push(...server.runtime.diagnostics());
  try {
    const health = await step('probe GET /health', async () => {
      const response = await fetch(`${server.url}/health`);
      const body = (await response.json()) as unknown;
      if (response.status !== 200) throw new Error(`GET /health answered ${response.status}`);
      return body;
    });
    const ok = steps.every((s) => s.ok) && !diagnostics.some((d) => d.severity === 'error');
    return { ok, steps, diagnostics, serverUrl: server.url, ...(health === undefined ? {} : { health }) };
  } finally {
    await step('stop', () => server.close());
  }
}
