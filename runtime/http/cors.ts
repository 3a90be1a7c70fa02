import type { IncomingMessage } from 'node:http';
import { FwFailure } from '../core/failure.ts';

export interface CorsOptions {
  /** Exact origins allowed to call the runtime from a browser, e.g. `https://app.example.com`. */
  origins: readonly string[];
  /** Whether browsers may send cookies/credentials (never combined with a wildcard). */
  credentials?: boolean;
}

export type ResolvedCors = { origins: ReadonlySet<string>; credentials: boolean } | null;

/** Off unless configured; an allow-list only: `*` is refused so credentials can never meet a wildcard. */
export function resolveCorsOptions(options: CorsOptions | undefined): ResolvedCors {
  if (!options || options.origins.length === 0) return null;
  for (const origin of options.origins) {
    if (origin === '*' || origin.includes('*')) {
      throw new Error('fw: CORS origins must be listed exactly; "*" is not allowed. List each origin, e.g. "https://app.example.com".');
    }
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new Error(`fw: CORS origin "${origin}" must look like "https://host[:port]" with no path.`);
    }
  }
  return { origins: new Set(options.origins), credentials: options.credentials ?? false };
}

/**
 * `FW_CORS_ORIGINS` (comma-separated) as options; unset or blank is none; a wildcard or an origin with
 * a path is `bad_config` naming the variable. Bearer tokens need no credentials mode.
 */
export function corsFromConfig(value: string | undefined): CorsOptions | undefined {
  const origins = (value ?? '').split(',').map((origin) => origin.trim()).filter((origin) => origin !== '');
  if (origins.length === 0) return undefined;
  try {
    resolveCorsOptions({ origins });
  } catch (error) {
    throw new FwFailure('bad_config', `FW_CORS_ORIGINS: ${(error as Error).message.replace(/^fw: /, '')}`, { suggestions: ['FW_CORS_ORIGINS=https://app.example.com,https://admin.example.com'] });
  }
  return { origins };
}

const allowedHeaders = 'content-type, authorization, x-fw-trace-id, x-fw-user-id, x-fw-tenant-id, x-fw-role, x-fw-live-revision, last-event-id';

/** The CORS response headers for this request, or none when its origin is not allowed. */
export function corsHeaders(cors: ResolvedCors, req: IncomingMessage): Record<string, string> {
  const origin = req.headers.origin;
  if (!cors || origin === undefined || !cors.origins.has(origin)) return {};
  return {
    'access-control-allow-origin': origin,
    vary: 'Origin',
    'access-control-expose-headers': 'x-fw-trace-id, retry-after',
    ...(cors.credentials ? { 'access-control-allow-credentials': 'true' } : {}),
  };
}

export function preflightHeaders(): Record<string, string> {
  return {
    'access-control-allow-methods': 'GET, POST, OPTIONS',
    'access-control-allow-headers': allowedHeaders,
    'access-control-max-age': '600',
  };
}
