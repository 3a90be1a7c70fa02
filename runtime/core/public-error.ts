/**
 * What a caller is told about an error. A 4xx describes the caller's own request (its diagnostics
 * point into the input), so it is shown as it is — unless it carries a redacted form, which is what
 * production shows (a database data error: the path and SQLSTATE, not the server's text). A 5xx is
 * fw's or a service's failure: outside dev mode the caller gets its code and the trace id only — its
 * message and diagnostics (SQL, paths, an external service's traceback, a connection string) go to the
 * server log under that trace id.
 */
import type { Diagnostic, FwError } from './errors.ts';

export interface PublicError {
  code: string;
  /** The app's own code of a 4xx it raised (`notFound(msg, { reason })`); public by intent. */
  reason?: string;
  message: string;
  diagnostics: Diagnostic[];
  stack?: string;
}

export function publicError(error: FwError, traceId: string, dev: boolean): PublicError {
  if (error.status < 500) {
    return { code: error.code, ...(error.reason ? { reason: error.reason } : {}), ...(!dev && error.redacted ? error.redacted : { message: error.message, diagnostics: error.diagnostics }) };
  }
  if (!dev) return { code: error.code, message: `${genericMessages[error.code] ?? 'Internal error.'} Quote trace id ${traceId} when reporting it.`, diagnostics: [] };
  return {
    code: error.code,
    message: error.message,
    diagnostics: error.diagnostics,
    ...(error.cause instanceof Error && error.cause.stack ? { stack: error.cause.stack } : {}),
  };
}

const genericMessages: Partial<Record<string, string>> = {
  internal: 'Internal error.',
  not_implemented: 'Not implemented.',
  bad_gateway: 'A service behind this one failed.',
  unavailable: 'Temporarily unavailable; try again.',
  gateway_timeout: 'A service behind this one did not answer in time.',
};
