import type { Diagnostic } from '../runtime/errors.ts';
import { FwFailure } from '../runtime/failure.ts';
import { AppLoadError } from './load-app.ts';

export type SeverityDiagnostic = Diagnostic & { severity: 'error' | 'warning' | 'info' };

/** The diagnostics a failed load/start carries, as error-severity entries for reports. */
export function toFailureDiagnostics(error: unknown): SeverityDiagnostic[] {
  if (error instanceof AppLoadError) {
    return error.problems.map((p) => ({ path: p.file ?? '', message: p.message, code: 'app_invalid', severity: 'error' as const }));
  }
  if (error instanceof FwFailure) {
    const own = error.diagnostics.map((d) => ({ ...d, severity: 'error' as const }));
    return own.length > 0 ? own : [{ path: '', message: error.message, code: error.kind, severity: 'error' }];
  }
  return [{ path: '', message: error instanceof Error ? error.message : String(error), code: 'internal', severity: 'error' }];
}
