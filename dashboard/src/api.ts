/**
 * Calls to fw's own routes on this origin. Outside dev mode they need the admin token, which the
 * developer types once; it stays in this tab's sessionStorage and travels in `x-fw-admin-token`.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly diagnostics: Array<{ path: string; code: string; message: string }>;
  constructor(status: number, code: string, message: string, diagnostics: Array<{ path: string; code: string; message: string }> = []) {
    super(message);
    this.status = status;
    this.code = code;
    this.diagnostics = diagnostics;
  }
}

const TOKEN_KEY = 'fw.dashboard.adminToken';

export function adminToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setAdminToken(token: string | null): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export async function api<T>(path: string, init: { method?: 'GET' | 'POST'; body?: unknown } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = adminToken();
  if (token) headers['x-fw-admin-token'] = token;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method: init.method ?? 'GET', headers, ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}) });
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    throw new ApiError(res.status, 'bad_json', `${path} answered ${res.status} with something that is not JSON.`);
  }
  if (!res.ok) {
    const error = body?.error ?? {};
    throw new ApiError(res.status, error.code ?? 'http_' + res.status, error.message ?? `${path} answered ${res.status}.`, error.diagnostics ?? []);
  }
  return body as T;
}

/** Listeners told when a call was refused for want of the admin token, so the shell can ask for it. */
export const unauthorized = new EventTarget();

export function isAuthError(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 401 || (error.status === 403 && /admin/i.test(error.message)));
}
