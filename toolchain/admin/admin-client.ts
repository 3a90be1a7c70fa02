import { ADMIN_TOKEN_HEADER } from '../../runtime/http/admin-routes.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { readRuntimeFile } from '../dev/runtime-file.ts';
import { resolveConfig } from '../../runtime/config/resolve-config.ts';

export interface AdminTarget {
  /** The app directory, whose running `fw dev` is found through `.fw/runtime.json`. */
  root: string;
  /** The runtime's address; overrides discovery. */
  url?: string;
  /** The admin credential for a runtime outside dev mode (default: `FW_ADMIN_TOKEN`). */
  token?: string;
}

/** The runtime to ask: `url`, else the app's running `fw dev`, else the default dev address. */
export function resolveRuntimeUrl(target: AdminTarget): string {
  if (target.url) return target.url.replace(/\/+$/, '');
  const running = readRuntimeFile(target.root);
  return (running?.serverUrl ?? running?.webUrl ?? 'http://127.0.0.1:3100').replace(/\/+$/, '');
}

/**
 * Calls one of the running runtime's admin routes (`/_fw/…`; GET, or a POST of the JSON `payload`) and returns
 * its JSON body. Failures become FwFailures that say what to do (start `fw dev`, pass `--url`, set the
 * admin token).
 */
export async function fetchAdmin(target: AdminTarget, route: string, method: 'GET' | 'POST' = 'GET', payload: Record<string, unknown> = {}): Promise<unknown> {
  const base = resolveRuntimeUrl(target);
  const token = target.token ?? resolveConfig().get('FW_ADMIN_TOKEN');
  const headers: Record<string, string> = token ? { [ADMIN_TOKEN_HEADER]: token } : {};
  if (method === 'POST') headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`${base}${route}`, { method, headers, ...(method === 'POST' ? { body: JSON.stringify(payload) } : {}) });
  } catch (error) {
    const reason = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new FwFailure('runtime_unreachable', `No fw runtime answers at ${base} (${reason}).`, {
      suggestions: ['fw dev  (in the app directory)', `fw live status --url <runtime url>`],
    });
  }
  const body = (await response.json().catch(() => null)) as { ok?: boolean; error?: { code: string; message: string; diagnostics?: [] } } | null;
  if (!response.ok) {
    const code = body?.error?.code ?? `http_${response.status}`;
    const suggestions =
      response.status === 401 || response.status === 403
        ? ['Run against fw dev (dev mode), or set FW_ADMIN_TOKEN / --admin-token to the runtime\'s admin token.']
        : [];
    throw new FwFailure(code, body?.error?.message ?? `${base}${route} answered ${response.status}.`, {
      suggestions,
      diagnostics: (body?.error?.diagnostics ?? []) as never,
    });
  }
  return body;
}
