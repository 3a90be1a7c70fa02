import { FwError } from 'fwjs';
import { SignJWT } from 'jose';

/** How long a sign-in lasts by default: an hour, then the web app asks for the password again. */
export const DEFAULT_SESSION_SECONDS = 3600;

export interface TokenClaims {
  /** The user's id: fw's `ctx.auth.userId`. */
  sub: string;
  /** The workspace's tenant: fw's `ctx.auth.tenantId`, what row-level security scopes to. */
  tenant_id: string;
  /** What src/policies.ts looks at: fw's `ctx.auth.role`. */
  role: string;
}

/**
 * The settings fw verifies tokens with (docs/auth.md), read when a token is issued: it is signed with
 * the same shared secret (HS256), issuer and audience, so the runtime accepts exactly these tokens.
 * Without `FW_AUTH=jwt` and a secret there is nothing to sign with, and sign-in says so (503).
 */
function signingSettings(env: NodeJS.ProcessEnv = process.env) {
  const secret = env.FW_JWT_HS_SECRET;
  const issuer = env.FW_JWT_ISSUER;
  const audience = env.FW_JWT_AUDIENCE?.split(',')[0]?.trim();
  if (env.FW_AUTH !== 'jwt' || !secret || !issuer || !audience) {
    throw new FwError('unavailable', 'Sign-in is not configured: start the server with FW_AUTH=jwt, FW_JWT_ISSUER, FW_JWT_AUDIENCE and FW_JWT_HS_SECRET (see README.md).', {
      reason: 'sign_in_not_configured',
    });
  }
  const seconds = env.B2B_SESSION_SECONDS ? Number(env.B2B_SESSION_SECONDS) : DEFAULT_SESSION_SECONDS;
  if (!Number.isInteger(seconds) || seconds < 60 || seconds > 86_400) {
    throw new FwError('unavailable', 'B2B_SESSION_SECONDS must be a whole number of seconds from 60 to 86400.', { reason: 'sign_in_not_configured' });
  }
  return { key: new TextEncoder().encode(secret), issuer, audience, seconds };
}

/** A signed HS256 access token for `claims`, and when it expires (epoch seconds). */
export async function issueToken(claims: TokenClaims, now: Date): Promise<{ token: string; expiresAt: number }> {
  const { key, issuer, audience, seconds } = signingSettings();
  const issuedAt = Math.floor(now.getTime() / 1000);
  const expiresAt = issuedAt + seconds;
  const token = await new SignJWT({ tenant_id: claims.tenant_id, role: claims.role })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuer(issuer)
    .setAudience(audience)
    .setIssuedAt(issuedAt)
    .setExpirationTime(expiresAt)
    .sign(key);
  return { token, expiresAt };
}
