import { type Diagnostic, errorStatus, type FwErrorCode } from './error-codes.ts';
import { sqlStateMeaning } from './sql-state.ts';

export { errorStatus, type Diagnostic, type FwErrorCode } from './error-codes.ts';


// A registry symbol rather than `instanceof`: an app's handlers may load a second copy of fw
// (the built package) while the runtime runs from source, and their errors must still be recognised.
const brand = Symbol.for('fw.error');

export interface FwErrorOptions {
  diagnostics?: Diagnostic[];
  /**
   * The app's own stable code for this refusal (`ticket_closed`), sent beside fw's `code` in the error
   * envelope of a 4xx so a client can tell two conflicts apart; lower snake_case.
   */
  reason?: string;
  /** What a caller outside dev mode is told instead of the message and diagnostics (public-error.ts). */
  redacted?: { message: string; diagnostics: Diagnostic[] };
  cause?: unknown;
  /** Extra headers for the HTTP response (e.g. `Allow` for 405). */
  headers?: Record<string, string>;
}

export class FwError extends Error {
  readonly code: FwErrorCode;
  readonly diagnostics: Diagnostic[];
  readonly reason: string | undefined;
  readonly headers: Record<string, string>;
  readonly redacted: { message: string; diagnostics: Diagnostic[] } | undefined;
  readonly [brand] = true;

  constructor(code: FwErrorCode, message: string, options: FwErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FwError';
    this.code = code;
    this.diagnostics = options.diagnostics ?? [];
    this.reason = options.reason;
    this.headers = options.headers ?? {};
    this.redacted = options.redacted;
  }

  get status(): number {
    return errorStatus[this.code];
  }
}

export function isFwError(value: unknown): value is FwError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}

/**
 * Turns anything thrown while handling a request into an FwError, keeping the original as `cause`.
 * PostgreSQL errors the caller can act on get their code (sql-state.ts; with the `args` the statement
 * ran on, a data error points at the argument). Unknown errors become `internal`; their message is
 * kept for logs and dev mode only.
 */
export function toFwError(error: unknown, args?: unknown): FwError {
  if (isFwError(error)) return error;
  const meaning = sqlStateMeaning(error, args);
  if (meaning) return new FwError(meaning.code, meaning.message, { cause: error, diagnostics: meaning.diagnostics, ...(meaning.redacted ? { redacted: meaning.redacted } : {}) });
  const message = error instanceof Error ? error.message : String(error);
  return new FwError('internal', message, { cause: error });
}
