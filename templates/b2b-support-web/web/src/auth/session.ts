import { FwError } from 'fwjs/client';

/** Who is signed in, and the access token fw's runtime checks on every call (src/endpoints/signIn.ts). */
export interface Session {
  token: string;
  /** When the token stops being accepted (epoch seconds): then the app asks for the password again. */
  expiresAt: number;
  user: { id: string; email: string; name: string; role: string };
  workspace: { slug: string; name: string };
}

// The session lives in sessionStorage: it survives a reload of this tab, is not shared with other tabs,
// and is gone when the tab closes. Not localStorage, which would keep a bearer token on the disk for
// every later visitor of this browser profile; not memory alone, which would sign you out on every
// reload. Script on the page could read either, which is why the build is served with a strict CSP
// (script-src 'self') and the token lives an hour at most (B2B_SESSION_SECONDS).
const SESSION_KEY = 'b2b-support-web.session';
// The workspace last signed in to (not a secret) is remembered across tabs, to fill the form.
const WORKSPACE_KEY = 'b2b-support-web.workspace';

/** Seconds before `expiresAt` at which a token counts as expired (a request still in flight must not outlive it). */
const EXPIRY_MARGIN_SECONDS = 5;

export function isExpired(session: Session, now = Date.now()): boolean {
  return now / 1000 >= session.expiresAt - EXPIRY_MARGIN_SECONDS;
}

/** The session of this tab, or null when there is none or it has expired. */
export function loadSession(): Session | null {
  try {
    const stored = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? 'null') as Session | null;
    if (stored && typeof stored.token === 'string' && typeof stored.expiresAt === 'number' && !isExpired(stored)) return stored;
  } catch {
    // Not JSON (edited by hand): treated as signed out.
  }
  sessionStorage.removeItem(SESSION_KEY);
  return null;
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
  localStorage.setItem(WORKSPACE_KEY, session.workspace.slug);
}

export function clearSession(): void {
  sessionStorage.removeItem(SESSION_KEY);
}

export function lastWorkspace(): string {
  return localStorage.getItem(WORKSPACE_KEY) ?? '';
}

/**
 * POST /api/auth/sign-in. Resolves to the new session; rejects with an FwError carrying the server's
 * code, reason and trace id (a wrong password: `unauthenticated`, reason `invalid_credentials`).
 */
export async function signIn(apiUrl: string, credentials: { workspace: string; email: string; password: string }): Promise<Session> {
  let response: Response;
  try {
    response = await fetch(`${apiUrl}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(credentials) });
  } catch (cause) {
    throw new FwError({ code: 'network_error', status: 0, message: 'The server could not be reached. Check your connection and try again.', cause });
  }
  const body = (await response.json().catch(() => null)) as { ok?: boolean; result?: Session; error?: Omit<ConstructorParameters<typeof FwError>[0], 'status'>; traceId?: string } | null;
  if (response.ok && body?.ok && body.result) return body.result;
  if (body?.error) throw new FwError({ ...body.error, status: response.status, traceId: body.traceId });
  throw new FwError({ code: 'bad_response', status: response.status, message: `The server answered ${response.status} without fw's error envelope.` });
}
