import type { Diagnostic } from '../../runtime/core/errors.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { AppLoadError } from '../app-load-error.ts';

export type SeverityDiagnostic = Diagnostic & { severity: 'error' | 'warning' | 'info' };

/** A `fw verify` gate's finding; errors fail the gate. Check diagnostics add `hint` and `suggestedCommand`. */
export type VerifyDiagnostic = SeverityDiagnostic & { suggestedCommand?: string };

/** The diagnostics a failed load/start carries, as error-severity entries for reports. */
export function toFailureDiagnostics(error: unknown): SeverityDiagnostic[] {
  if (error instanceof AppLoadError) {
    // path is file:line:column when the place is known (as fw check prints it), the file alone otherwise.
    return error.problems.map((p) => ({
      path: p.file ? `${p.file}${p.line ? `:${p.line}:${p.column ?? 1}` : ''}` : '',
      message: p.message,
      code: p.code ?? 'app_invalid',
      ...(p.hint ? { hint: p.hint } : {}),
      severity: 'error' as const,
    }));
  }
  if (error instanceof FwFailure) {
    const own = error.diagnostics.map((d) => ({ ...d, severity: 'error' as const }));
    // A failure without diagnostics of its own still carries what to do next.
    return own.length > 0 ? own : [{ path: '', message: error.message, code: error.kind, ...(error.suggestions.length > 0 ? { hint: error.suggestions.join(' ') } : {}), severity: 'error' }];
  }
  return [{ path: '', message: error instanceof Error ? error.message : String(error), code: 'internal', severity: 'error' }];
}
