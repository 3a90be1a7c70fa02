import type { Diagnostic, FwErrorCode as ServerErrorCode } from '../runtime/core/error-codes.ts';

/** Codes the runtime sends in its error envelope: defined once, with their statuses, in runtime/core/error-codes.ts. */
export type { ServerErrorCode };

/**
 * Codes raised on the client: `network_error` (no response: refused, reset, unparsable URL; status 0),
 * `bad_response` (a response that is not fw's envelope; its HTTP status), `aborted` (the call's
 * signal fired; status 0), `client_error` (the app's own code failed before sending, e.g. `getToken`; status 0).
 */
export type ClientErrorCode = 'network_error' | 'bad_response' | 'aborted' | 'client_error';

export type FwErrorCode = ServerErrorCode | ClientErrorCode;

export type { Diagnostic };

export interface FwErrorInit {
  code: FwErrorCode;
  message: string;
  /** The HTTP status, or 0 when no response arrived. */
  status: number;
  diagnostics?: readonly Diagnostic[];
  /** The app's own code of a refusal (`conflict('…', { reason: 'ticket_closed' })` on the server). */
  reason?: string;
  traceId?: string;
  /** Seconds to wait before trying again, from a `Retry-After` header (`tooManyRequests` on the server). */
  retryAfterSeconds?: number;
  cause?: unknown;
}

/**
 * Every failed client call rejects with an FwError: the server's envelope, or a client-side failure.
 *
 * @example
 *   try { await client.command('createNote', { title: '' }); }
 *   catch (error) { if (error instanceof FwError && error.code === 'validation_failed') show(error.diagnostics); }
 *   // a handler's `throw conflict('The ticket is closed.', { reason: 'ticket_closed' })`:
 *   // error.status 409, error.code 'conflict', error.reason 'ticket_closed'
 */
export class FwError extends Error {
  readonly code: FwErrorCode;
  readonly status: number;
  readonly diagnostics: readonly Diagnostic[];
  /** The app's own code of a refusal its handler threw (`notFound(msg, { reason })`); undefined otherwise. */
  readonly reason: string | undefined;
  /** The runtime's trace id for this request (also in its logs); absent when no response arrived. */
  readonly traceId: string | undefined;
  /** Seconds to wait before trying again (a 429's `Retry-After`); undefined when the server named none. */
  readonly retryAfterSeconds: number | undefined;

  constructor(init: FwErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'FwError';
    this.code = init.code;
    this.status = init.status;
    this.diagnostics = init.diagnostics ?? [];
    this.reason = init.reason;
    this.traceId = init.traceId;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }

  /** Wraps anything thrown while making a call, keeping it as `cause`; FwErrors pass through. */
  static from(thrown: unknown): FwError {
    if (thrown instanceof FwError) return thrown;
    const message = thrown instanceof Error ? thrown.message : String(thrown);
    return new FwError({ code: 'client_error', status: 0, message, cause: thrown });
  }
}

/**
 * The FwError for a fetch that produced no response: `aborted` when `signal` fired, otherwise
 * `network_error` naming the URL and, for Node's terse "fetch failed", the underlying reason.
 */
export function unreachable(thrown: unknown, url: string, signal: AbortSignal | undefined): FwError {
  if (signal?.aborted) {
    return new FwError({ code: 'aborted', status: 0, message: `The call to ${url} was aborted.`, cause: signal.reason });
  }
  // Node's fetch says only "fetch failed"; the reason (ECONNREFUSED, a bad URL…) is in its cause.
  const reason = thrown instanceof Error && thrown.cause instanceof Error ? thrown.cause.message : undefined;
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return new FwError({
    code: 'network_error',
    status: 0,
    message: `Could not reach ${url}: ${reason ? `${message} (${reason})` : message}`,
    cause: thrown,
  });
}
