import type { Diagnostic } from './error-codes.ts';
import { FwError } from './errors.ts';

/** What a refusal may carry besides its message. */
export interface RefusalOptions {
  /** The app's own stable code (lower snake_case, e.g. `ticket_closed`), sent as `error.reason`. */
  reason?: string;
  /** Where in the args the problem is (`{ path: 'title', code: 'taken', message }`). */
  diagnostics?: Diagnostic[];
  cause?: unknown;
}

/**
 * Refusals a handler throws to answer with an honest status and fw's error envelope instead of a
 * 500: the transaction of the entry rolls back, the caller gets `{ ok: false, error: { code, reason?,
 * message, diagnostics } }`, and the client rejects with an FwError carrying the same `code`,
 * `reason` and `status`. The message is shown to the caller (in production too): say what is wrong
 * with the request, not how the server works.
 *
 * @example
 *   const ticket = await ctx.db.selectFrom('tickets').selectAll().where('id', '=', args.id).executeTakeFirst();
 *   if (!ticket) throw notFound(`No ticket ${args.id}.`);
 *   if (ticket.status === 'closed') throw conflict('The ticket is closed.', { reason: 'ticket_closed' });
 */
export function notFound(message: string, options?: RefusalOptions): FwError {
  return refusal('not_found', message, options);
}

/** 409 `conflict`: the request clashes with the current state (a duplicate, a closed ticket). */
export function conflict(message: string, options?: RefusalOptions): FwError {
  return refusal('conflict', message, options);
}

/** 403 `forbidden`: this caller may not do this to this row (a policy decides entries; this is finer). */
export function forbidden(message: string, options?: RefusalOptions): FwError {
  return refusal('forbidden', message, options);
}

/** 400 `bad_request`: the args are well-formed but make no sense together (validation covers their shape). */
export function badRequest(message: string, options?: RefusalOptions): FwError {
  return refusal('bad_request', message, options);
}

/**
 * 429 `too_many_requests`: the caller must wait (too many failed sign-ins, a quota). `retryAfterSeconds`
 * becomes the `Retry-After` header, and the client's error carries it too.
 */
export function tooManyRequests(message: string, options: RefusalOptions & { retryAfterSeconds?: number } = {}): FwError {
  const { retryAfterSeconds, ...rest } = options;
  if (retryAfterSeconds !== undefined && !(Number.isInteger(retryAfterSeconds) && retryAfterSeconds >= 0)) {
    throw new TypeError(`retryAfterSeconds must be a whole number of seconds ≥ 0, got ${String(retryAfterSeconds)}.`);
  }
  return refusal('too_many_requests', message, rest, retryAfterSeconds === undefined ? undefined : { 'retry-after': String(retryAfterSeconds) });
}

const reasonPattern = /^[a-z][a-z0-9_]{0,63}$/;

function refusal(code: 'not_found' | 'conflict' | 'forbidden' | 'bad_request' | 'too_many_requests', message: string, options: RefusalOptions = {}, headers?: Record<string, string>): FwError {
  if (options.reason !== undefined && !reasonPattern.test(options.reason)) {
    // Misuse fails where it is written, not in a client that cannot match the code.
    throw new TypeError(`A refusal's reason must be lower snake_case (at most 64 characters, e.g. 'ticket_closed'), got ${JSON.stringify(options.reason)}.`);
  }
  return new FwError(code, message, {
    ...(options.reason !== undefined ? { reason: options.reason } : {}),
    ...(options.diagnostics ? { diagnostics: options.diagnostics } : {}),
    ...(options.cause !== undefined ? { cause: options.cause } : {}),
    ...(headers ? { headers } : {}),
  });
}
