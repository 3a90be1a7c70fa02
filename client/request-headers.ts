/** Dev-headers identity (development only): sent as `x-fw-user-id`, `x-fw-tenant-id`, `x-fw-role`. */
export interface DevAuth {
  userId: string;
  /** A UUID. */
  tenantId: string;
  role: string;
}

/** Returns the bearer token for the next call, or nothing to call anonymously. */
export type GetToken = () => string | null | undefined | Promise<string | null | undefined>;

/** The parts of the client options that decide who a request speaks for. */
export interface CallerOptions {
  devAuth?: DevAuth | undefined;
  getToken?: GetToken | undefined;
  headers?: Record<string, string> | undefined;
}

/**
 * The headers of one runtime request: the app's `headers`, JSON content type, `accept`, the dev
 * identity, and a bearer token from `getToken` (asked afresh for every request and reconnect).
 * Rejects with whatever `getToken` threw.
 *
 * @example
 *   const headers = await requestHeaders({ devAuth }, 'application/json');
 */
export async function requestHeaders(caller: CallerOptions, accept: string): Promise<Record<string, string>> {
  const headers: Record<string, string> = { ...caller.headers, 'content-type': 'application/json', accept };
  if (caller.devAuth) {
    headers['x-fw-user-id'] = caller.devAuth.userId;
    headers['x-fw-tenant-id'] = caller.devAuth.tenantId;
    headers['x-fw-role'] = caller.devAuth.role;
  }
  const token = await caller.getToken?.();
  if (token) headers.authorization = `Bearer ${token}`;
  return headers;
}
