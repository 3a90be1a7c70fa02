/**
 * The one error type of fw: a closed set of codes, each with its HTTP status.
 *
 * @example
 *   throw new FwError('not_found', `No note ${args.id}`)
 */
export const errorStatus = {
  bad_json: 400,
  bad_request: 400,
  validation_failed: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_subscriptions: 429,
  internal: 500,
  not_implemented: 501,
  bad_gateway: 502,
  unavailable: 503,
  gateway_timeout: 504,
} as const satisfies Record<string, number>;

export type FwErrorCode = keyof typeof errorStatus;

/** One problem found in the input: where it is, what is wrong, and a stable code. */
export interface Diagnostic {
  path: string;
  message: string;
  code: string;
  hint?: string;
}

// A registry symbol rather than `instanceof`: an app's handlers may load a second copy of fw
// (the built package) while the runtime runs from source, and their errors must still be recognised.
const brand = Symbol.for('fw.error');

export interface FwErrorOptions {
  diagnostics?: Diagnostic[];
  cause?: unknown;
  /** Extra headers for the HTTP response (e.g. `Allow` for 405). */
  headers?: Record<string, string>;
}

export class FwError extends Error {
  readonly code: FwErrorCode;
  readonly diagnostics: Diagnostic[];
  readonly headers: Record<string, string>;
  readonly [brand] = true;

  constructor(code: FwErrorCode, message: string, options: FwErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FwError';
    this.code = code;
    this.diagnostics = options.diagnostics ?? [];
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return errorStatus[this.code];
  }
}

export function isFwError(value: unknown): value is FwError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}

/** PostgreSQL SQLSTATEs that say something the caller can act on. */
const sqlStateErrors: Record<string, { code: FwErrorCode; message: string }> = {
  '23505': { code: 'conflict', message: 'A row with the same unique value already exists.' },
  '23503': { code: 'conflict', message: 'The row refers to a row that does not exist, or is still referred to.' },
  '42501': { code: 'forbidden', message: 'The database refused the operation for this caller (row-level security or privileges).' },
};

/**
 * Turns anything thrown while handling a request into an FwError, keeping the original as `cause`.
 * Unknown errors become `internal`; their message is kept for logs and dev mode only.
 */
export function toFwError(error: unknown): FwError {
  if (isFwError(error)) return error;
  const sqlState = (error as { code?: unknown } | null)?.code;
  if (typeof sqlState === 'string' && sqlState in sqlStateErrors) {
    const known = sqlStateErrors[sqlState]!;
    return new FwError(known.code, known.message, { cause: error });
  }
  if (typeof sqlState === 'string' && sqlState.startsWith('22')) return dataError(error as PgError, sqlState);
  if (sqlState === '25006') {
    return new FwError(
      'internal',
      'A write was attempted inside a read-only transaction: queries and liveQueries are read-only. Move the write into a command.',
      { cause: error },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return new FwError('internal', message, { cause: error });
}

interface PgError extends Error {
  column?: string;
  table?: string;
}

/**
 * PostgreSQL class 22 (data exception: invalid text for a uuid or number, a value too long or out of
 * range, a bad date) is the caller's value not fitting a column or a cast: 400, not 500. The message
 * names the type, and the column where PostgreSQL knows it.
 */
function dataError(error: PgError, sqlState: string): FwError {
  const where = error.column ? `column.${error.column}` : 'args';
  return new FwError('validation_failed', `A value does not fit the database: ${error.message}`, {
    cause: error,
    diagnostics: [{ path: where, code: `sqlstate_${sqlState}`, message: error.message, hint: 'Check the value against the argument’s type and length (validate it in the entry’s args to get a precise path).' }],
  });
}
