import type { IncomingHttpHeaders } from 'node:http';
import type { Auth } from '../core/entry-types.ts';
import { FwError } from '../core/errors.ts';
import type { Authenticator, AuthResult } from './auth-result.ts';
import { type Clock, systemClock } from '../core/clock.ts';
import { ANONYMOUS, authFromDevHeaders } from './dev-headers.ts';
import { createJwtAuthenticator, type JwtAuthOptions } from './jwt.ts';

/** How callers are identified: dev headers (dev mode only), nobody, or a verified JWT. */
export type AuthOption = 'dev-headers' | 'none' | JwtAuthOptions;

export type { Authenticator, AuthResult } from './auth-result.ts';

const DEV_HEADERS = ['x-fw-user-id', 'x-fw-tenant-id', 'x-fw-role'] as const;

/**
 * The authenticator for an auth option. Outside dev mode, dev-headers auth is refused at startup,
 * and a request that sends dev headers anyway is refused (401 `dev_headers_in_production`) rather
 * than quietly treated as anonymous: a client built with `devAuth` should fail loudly in production.
 *
 * @example
 *   const authenticate = createAuthenticator({ kind: 'jwt', issuer, audience: 'notes-api' }, false);
 *
 * @param clock The time tokens are checked by; only tests pass one (see clock.ts).
 */
export function createAuthenticator(option: AuthOption, dev: boolean, clock: Clock = systemClock): Authenticator {
  if (option === 'dev-headers') {
    if (!dev) throw new Error('fw: dev-headers auth is for development only; configure JWT auth for production (FW_AUTH=jwt, docs/auth.md).');
    return async (headers) => ({ auth: authFromDevHeaders(headers) });
  }
  const identify: Authenticator = option === 'none' ? async () => ({ auth: ANONYMOUS }) : createJwtAuthenticator(option, clock);
  if (dev) return identify;
  return async function refuseDevHeaders(headers) {
    const sent = DEV_HEADERS.find((name) => headers[name] !== undefined);
    if (sent) {
      const fix =
        option === 'none'
          ? 'This runtime has no auth configured: set FW_AUTH=jwt (docs/auth.md), then send "Authorization: Bearer <JWT>".'
          : 'Send "Authorization: Bearer <JWT>" from your identity provider instead (the client option getToken), and drop devAuth.';
      throw new FwError('unauthenticated', `Dev auth headers (${sent}) are for development only and identify nobody in production. ${fix}`, {
        diagnostics: [{ path: `headers.${sent}`, code: 'dev_headers_in_production', message: fix }],
      });
    }
    return identify(headers);
  };
}
