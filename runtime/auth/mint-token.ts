import { SignJWT } from 'jose';
import { FwFailure } from '../core/failure.ts';
import type { AuthOption } from './authenticator.ts';
import { uuidPattern } from './dev-headers.ts';
import { resolveJwtOptions } from './jwt.ts';

export interface TokenRequest {
  userId: string;
  /** A UUID; absent: a caller with no tenant. */
  tenantId?: string;
  role?: string;
  /** How long the token lives; default and most: what the API accepts (FW_JWT_MAX_AGE, one day by default). */
  expiresInSeconds?: number;
}

export interface MintedToken {
  token: string;
  /** ISO time the token stops being accepted (before the clock tolerance). */
  expiresAt: string;
}

const unavailable = (why: string) =>
  new FwFailure('auth_token_unavailable', `fw auth token signs with the app's own shared secret, and ${why}`, {
    suggestions: [
      'Set FW_AUTH=jwt, FW_JWT_ISSUER, FW_JWT_AUDIENCE and FW_JWT_HS_SECRET (32+ random characters) as fw start has them (docs/auth.md).',
      'With an identity provider (RS256, ES256, EdDSA), sign in there and use its access token.',
    ],
  });

/**
 * A token the app's runtime accepts, for an app that verifies HS256/384/512 tokens with a shared secret
 * (`FW_AUTH=jwt` with `FW_JWT_HS_SECRET`): its issuer, its first audience, its claim names, its first
 * symmetric algorithm. What `fw auth token` prints, to sign in to a built app without an identity
 * provider; whoever has the secret can mint any identity, as the app's own sign-in can.
 *
 * @example
 *   const { token } = await mintToken(parseAuthConfig(), { userId: 'alice', tenantId, role: 'member' });
 */
export async function mintToken(auth: AuthOption | undefined, request: TokenRequest, now: number = Date.now()): Promise<MintedToken> {
  if (auth === undefined) throw unavailable('FW_AUTH is not set.');
  if (typeof auth === 'string') throw unavailable(`FW_AUTH is ${auth}, not jwt.`);
  if (!auth.hsSecret) throw unavailable('FW_JWT_HS_SECRET is not set: tokens come from the identity provider (FW_JWT_ISSUER) whose keys the runtime verifies.');
  const resolved = resolveJwtOptions(auth);
  if (!/^[^\p{Cc}]{1,200}$/u.test(request.userId)) throw new FwFailure('invalid_arguments', 'The user id must be 1 to 200 characters, no control characters.', { suggestions: ['fw auth token --user alice --tenant <uuid>'] });
  if (request.tenantId !== undefined && !uuidPattern.test(request.tenantId)) {
    throw new FwFailure('invalid_arguments', `The tenant must be a UUID, not "${request.tenantId}".`, { suggestions: ['fw auth token --user alice --tenant 00000000-0000-4000-8000-000000000001'] });
  }
  const lifetime = request.expiresInSeconds ?? resolved.maxTokenAgeSeconds;
  if (!Number.isInteger(lifetime) || lifetime < 1 || lifetime > resolved.maxTokenAgeSeconds) {
    throw new FwFailure('invalid_arguments', `A token may live 1 to ${resolved.maxTokenAgeSeconds} seconds here (FW_JWT_MAX_AGE), not ${request.expiresInSeconds}.`, { suggestions: ['--expires-in 3600'] });
  }
  const claims: Record<string, unknown> = {};
  const put = (claimPath: string, value: string) => {
    const keys = claimPath.split('.');
    let at = claims;
    for (const key of keys.slice(0, -1)) at = (at[key] ??= {}) as Record<string, unknown>;
    at[keys.at(-1)!] = value;
  };
  put(resolved.claims.userId, request.userId);
  if (request.tenantId !== undefined) put(resolved.claims.tenantId, request.tenantId.toLowerCase());
  if (request.role !== undefined) put(resolved.claims.role, request.role);
  const issuedAt = Math.floor(now / 1000);
  const alg = resolved.algorithms.find((a) => a.startsWith('HS'))!;
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg, typ: 'JWT' })
    .setIssuer(resolved.issuer)
    .setAudience(resolved.audience[0]!)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + lifetime)
    .sign(resolved.secret!);
  return { token, expiresAt: new Date((issuedAt + lifetime) * 1000).toISOString() };
}

/**
 * A sign-in link for a built app from a template: `<appUrl>/#token=<JWT>`. The template's web app
 * (web/src/lib/token.ts, web/composables/token.ts) keeps the token from the fragment, which no server
 * receives or logs, and signs in with it (its getToken).
 */
export function signInLink(appUrl: string, token: string): string {
  const url = new URL(appUrl);
  url.hash = `token=${token}`;
  return url.toString();
}
