// fw's error codes with their HTTP statuses, and the diagnostic shape: below errors.ts, so the modules
// that map foreign errors to these codes (sql-state.ts) do not import the error class.

/**
 * fw's closed set of error codes, each with its HTTP status (the one error type, FwError, is in errors.ts).
 *
 * @example
 *   throw new FwError('not_found', `No note ${args.id}`)
 */
export const errorStatus = {
  bad_json: 400,
  bad_request: 400,
  validation_failed: 400,
  /** A pagination cursor that is malformed or was issued for other args (paginate.ts). */
  invalid_cursor: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_subscriptions: 429,
  /** The caller must wait before trying again (`tooManyRequests`, with a `Retry-After` header). */
  too_many_requests: 429,
  internal: 500,
  not_implemented: 501,
  bad_gateway: 502,
  unavailable: 503,
  // fw dev: the app's schema has changes fw will not apply by itself, so it serves no entry until they
  // are resolved (docs/migrations.md) rather than run code against a database that disagrees with it.
  schema_blocked: 503,
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
