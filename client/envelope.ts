import { logServerFailure } from './dev-console.ts';
import { type Diagnostic, FwError, type FwErrorCode } from './errors.ts';

interface FailureEnvelope {
  ok: false;
  error: { code: FwErrorCode; message: string; diagnostics?: Diagnostic[]; reason?: unknown };
  traceId?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isFailure(body: unknown): body is FailureEnvelope {
  return (
    isRecord(body) &&
    body.ok === false &&
    isRecord(body.error) &&
    typeof body.error.code === 'string' &&
    typeof body.error.message === 'string'
  );
}

/**
 * Reads fw's JSON envelope from a runtime response: returns `result` on success, throws the
 * envelope's FwError on failure, and `bad_response` for anything else (a proxy's HTML page, a 502…).
 * Network failures while reading the body are left to the caller.
 */
export async function readEnvelope(response: Response, onSuccess?: (body: Record<string, unknown>) => void): Promise<unknown> {
  const text = await response.text();
  const headerTraceId = response.headers.get('x-fw-trace-id') ?? undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (response.ok && isRecord(body) && body.ok === true && 'result' in body) {
    onSuccess?.(body);
    return body.result;
  }
  if (isFailure(body)) {
    const error = new FwError({
      // A newer runtime may send a code this client does not list; it is passed on unchanged.
      code: body.error.code,
      message: body.error.message,
      status: response.status,
      diagnostics: Array.isArray(body.error.diagnostics) ? body.error.diagnostics : [],
      ...(typeof body.error.reason === 'string' ? { reason: body.error.reason } : {}),
      traceId: typeof body.traceId === 'string' ? body.traceId : headerTraceId,
      ...retryAfter(response),
    });
    logServerFailure(error);
    throw error;
  }
  const contentType = response.headers.get('content-type') ?? 'no content type';
  throw new FwError({
    code: 'bad_response',
    status: response.status,
    message: `Expected fw's JSON envelope from ${response.url || 'the runtime'}, got HTTP ${response.status} (${contentType}): ${text.slice(0, 120)}`,
    traceId: headerTraceId,
  });
}

/** `Retry-After` in whole seconds (fw sends no HTTP date), when the response has one. */
function retryAfter(response: Response): { retryAfterSeconds?: number } {
  const value = response.headers.get('retry-after');
  return value !== null && /^\d{1,9}$/.test(value) ? { retryAfterSeconds: Number(value) } : {};
}
