import type { IncomingHttpHeaders } from 'node:http';
import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';
import type { Auth } from '../core/entry-types.ts';
import { FwError } from '../core/errors.ts';
import { FwFailure } from '../core/failure.ts';
import type { Authenticator, AuthResult } from './auth-result.ts';
import { type Clock, systemClock } from '../core/clock.ts';
import { uuidPattern } from './dev-headers.ts';

/**
 * Production auth: `Authorization: Bearer <JWT>` verified against the identity provider's keys
 * (docs/auth.md). The same settings come from the environment through `parseAuthConfig`.
 *
 * @example
 *   createRuntimeHandler({ app, db, dev: false, auth: { kind: 'jwt', issuer: 'https://login.example.com/', audience: 'notes-api' } })
 */
export interface JwtAuthOptions {
  kind: 'jwt';
  /** The `iss` every token must carry; without `jwksUrl`, OIDC discovery starts here. */
  issuer: string;
  /** The `aud` a token must carry (one of these). */
  audience: string | readonly string[];
  /** The key set (JWKS) URL; default: the `jwks_uri` of `<issuer>/.well-known/openid-configuration`. */
  jwksUrl?: string;
  /** Accepted `alg` values (default RS256, ES256, EdDSA). `none` never; HS256/384/512 only with `hsSecret`. */
  algorithms?: readonly string[];
  /** A shared secret (32+ characters) for HS256/384/512 tokens, used instead of a key set. */
  hsSecret?: string;
  /** Leeway for `exp` and `nbf`, in seconds (default 30). */
  clockToleranceSeconds?: number;
  /**
   * The longest a token may live, in seconds (default 86 400, one day): a token still valid for longer
   * than this (`exp` far away), or issued longer ago (`iat`), is refused — a leaked token must not
   * work for ever. 60 to 31 536 000 (a year).
   */
  maxTokenAgeSeconds?: number;
  /** Claims mapped to the caller; dotted paths reach nested claims (`app_metadata.role`). */
  claims?: { userId?: string; tenantId?: string; role?: string };
  /** Least time between two key-set fetches caused by an unknown `kid`, in ms (default 30 000). */
  jwksCooldownMs?: number;
}

const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const SYMMETRIC = ['HS256', 'HS384', 'HS512'];
const DEFAULT_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'];
const DEFAULT_CLAIMS = { userId: 'sub', tenantId: 'tenant_id', role: 'role' };
/** One day: longer than the access tokens identity providers issue by default (5 minutes to 24 hours). */
export const DEFAULT_MAX_TOKEN_AGE_SECONDS = 86_400;
// Identity values end up in SQL settings and logs: bounded, no control characters.
const identityPattern = /^[^\p{Cc}]{1,200}$/u;

interface ResolvedJwtOptions {
  issuer: string;
  audience: string[];
  jwksUrl: URL | undefined;
  algorithms: string[];
  secret: Uint8Array | undefined;
  clockToleranceSeconds: number;
  maxTokenAgeSeconds: number;
  claims: { userId: string; tenantId: string; role: string };
  jwksCooldownMs: number;
}

function invalidConfig(message: string, suggestion: string): FwFailure {
  // The fix is in the message too: an app's own server shows only the message of what it throws.
  return new FwFailure('auth_config_invalid', `JWT auth: ${message} ${suggestion}`, { suggestions: [suggestion, 'See docs/auth.md.'] });
}

/** Checks JWT options once, at startup, naming the option and its environment variable. */
export function resolveJwtOptions(options: JwtAuthOptions): ResolvedJwtOptions {
  if (!options.issuer?.trim()) throw invalidConfig('no issuer is configured.', 'Set auth.issuer (FW_JWT_ISSUER), e.g. https://login.example.com/');
  const audience = (typeof options.audience === 'string' ? [options.audience] : [...(options.audience ?? [])]).filter((a) => a.trim() !== '');
  if (audience.length === 0) {
    throw invalidConfig('no audience is configured: without one, tokens issued for other APIs would be accepted.', 'Set auth.audience (FW_JWT_AUDIENCE) to the API identifier your identity provider puts in `aud`.');
  }
  const secret = options.hsSecret;
  const algorithms = [...(options.algorithms ?? (secret ? ['HS256'] : DEFAULT_ALGORITHMS))];
  if (algorithms.length === 0) throw invalidConfig('the algorithm list is empty.', `Set auth.algorithms (FW_JWT_ALGORITHMS), e.g. ${DEFAULT_ALGORITHMS.join(',')}`);
  for (const alg of algorithms) {
    if (alg.toLowerCase() === 'none') throw invalidConfig('"none" is never accepted: unsigned tokens prove nothing.', `Remove "none" from auth.algorithms (FW_JWT_ALGORITHMS).`);
    if (SYMMETRIC.includes(alg)) {
      if (!secret) throw invalidConfig(`${alg} needs a shared secret, and none is configured.`, 'Set auth.hsSecret (FW_JWT_HS_SECRET), or use an asymmetric algorithm such as RS256.');
    } else if (ASYMMETRIC.includes(alg)) {
      if (secret) throw invalidConfig(`with a shared secret only HS256/HS384/HS512 are accepted, not ${alg}.`, 'Use either hsSecret with HS* algorithms, or a key set with asymmetric ones.');
    } else {
      throw invalidConfig(`unknown algorithm "${alg}".`, `Choose from ${[...ASYMMETRIC, ...SYMMETRIC].join(', ')}.`);
    }
  }
  if (secret !== undefined && secret.length < 32) throw invalidConfig('the shared secret is shorter than 32 characters.', 'Use 32+ random characters for auth.hsSecret (FW_JWT_HS_SECRET).');
  if (secret && options.jwksUrl) throw invalidConfig('both a shared secret and a key set URL are configured.', 'Configure one: hsSecret (FW_JWT_HS_SECRET) or jwksUrl (FW_JWT_JWKS_URL).');
  let jwksUrl: URL | undefined;
  if (options.jwksUrl) {
    jwksUrl = parseUrl(options.jwksUrl, 'auth.jwksUrl (FW_JWT_JWKS_URL)');
  } else if (!secret) {
    // Discovery needs the issuer to be a URL.
    parseUrl(options.issuer, 'auth.issuer (FW_JWT_ISSUER), used for OIDC discovery without a jwksUrl,');
  }
  const tolerance = options.clockToleranceSeconds ?? 30;
  if (!Number.isFinite(tolerance) || tolerance < 0 || tolerance > 600) {
    throw invalidConfig(`clock tolerance ${tolerance} is out of range.`, 'Set auth.clockToleranceSeconds (FW_JWT_CLOCK_TOLERANCE) to 0–600 seconds, e.g. 30.');
  }
  const maxAge = options.maxTokenAgeSeconds ?? DEFAULT_MAX_TOKEN_AGE_SECONDS;
  if (!Number.isInteger(maxAge) || maxAge < 60 || maxAge > 31_536_000) {
    throw invalidConfig(`maximum token age ${maxAge} is out of range.`, `Set auth.maxTokenAgeSeconds (FW_JWT_MAX_AGE) to 60–31536000 seconds; the default is ${DEFAULT_MAX_TOKEN_AGE_SECONDS} (one day).`);
  }
  const claims = { ...DEFAULT_CLAIMS };
  for (const key of ['userId', 'tenantId', 'role'] as const) {
    const path = options.claims?.[key];
    if (path === undefined) continue;
    if (!/^[^.\s][^\s]*$/.test(path) || path.endsWith('.')) throw invalidConfig(`claim path "${path}" for ${key} is not valid.`, 'Use a claim name or a dotted path such as app_metadata.role.');
    claims[key] = path;
  }
  return {
    issuer: options.issuer,
    audience,
    jwksUrl,
    algorithms,
    secret: secret ? new TextEncoder().encode(secret) : undefined,
    clockToleranceSeconds: tolerance,
    maxTokenAgeSeconds: maxAge,
    claims,
    jwksCooldownMs: options.jwksCooldownMs ?? 30_000,
  };
}

function parseUrl(value: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidConfig(`${what} is not a URL: "${value}".`, 'Use an absolute https:// URL.');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url))) {
    throw invalidConfig(`${what} must use https (plain http only for localhost).`, `Use https://${url.host}${url.pathname}`);
  }
  return url;
}

function isLoopback(url: URL): boolean {
  return url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
}

/** The key source could not be reached or read: the identity provider's problem, not the caller's. */
class KeysUnavailable extends Error {}

/**
 * Verifies `Authorization: Bearer <JWT>`: signature (JWKS or a shared secret), algorithm allow-list,
 * issuer, audience, `exp`/`nbf` with clock tolerance; then maps claims to the caller. No header means
 * anonymous; a bad token is FwError `unauthenticated` with a diagnostic code (docs/auth.md). Messages
 * never contain the token.
 *
 * @example
 *   const authenticate = createJwtAuthenticator({ kind: 'jwt', issuer, audience: 'notes-api' });
 *   const { auth, expiresAt } = await authenticate(req.headers);
 *
 * @param clock The time `exp` and `nbf` are checked at; only tests pass one (see clock.ts).
 */
export function createJwtAuthenticator(options: JwtAuthOptions, clock: Clock = systemClock): Authenticator {
  const resolved = resolveJwtOptions(options);
  const key: Uint8Array | JWTVerifyGetKey = resolved.secret ?? createKeyResolver(resolved);
  const verifyOptions = {
    issuer: resolved.issuer,
    audience: resolved.audience,
    algorithms: resolved.algorithms,
    clockTolerance: resolved.clockToleranceSeconds,
    // A token without `exp` would never end (nor would a live stream opened with it).
    requiredClaims: ['exp'],
  };

  return async function authenticateJwt(headers: IncomingHttpHeaders): Promise<AuthResult> {
    const header = headers.authorization;
    if (header === undefined) return { auth: { kind: 'anonymous', userId: null, tenantId: null, role: null } };
    const token = /^Bearer +([A-Za-z0-9_~+/=.-]+) *$/i.exec(header)?.[1];
    if (!token) throw unauthenticated('token_invalid', 'The Authorization header must be "Bearer <JWT>".');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, key, { ...verifyOptions, currentDate: new Date(clock.now()) }));
    } catch (error) {
      throw verificationError(error, resolved);
    }
    const now = clock.now() / 1000;
    const limit = resolved.maxTokenAgeSeconds + resolved.clockToleranceSeconds;
    if (payload.exp! - now > limit) {
      throw unauthenticated('token_lifetime_too_long', `The token stays valid for longer than ${resolved.maxTokenAgeSeconds} seconds, the most this API accepts (FW_JWT_MAX_AGE); issue shorter-lived tokens.`);
    }
    // Issued in the future: a clock far off, or a token minted to outlive FW_JWT_MAX_AGE (its age counts from `iat`).
    if (typeof payload.iat === 'number' && payload.iat - now > resolved.clockToleranceSeconds) {
      throw unauthenticated('token_issued_in_future', `The token says it was issued ${Math.round(payload.iat - now)} seconds from now, beyond the ${resolved.clockToleranceSeconds} seconds of clock difference this API allows (FW_JWT_CLOCK_TOLERANCE); check the issuer's clock.`);
    }
    if (typeof payload.iat === 'number' && now - payload.iat > limit) {
      throw unauthenticated('token_too_old', `The token was issued more than ${resolved.maxTokenAgeSeconds} seconds ago, the most this API accepts (FW_JWT_MAX_AGE); get a fresh one.`);
    }
    const auth = mapClaims(payload, resolved.claims);
    // When this runtime stops accepting the token: live streams opened with it end then.
    return { auth, expiresAt: ((payload.exp ?? 0) + resolved.clockToleranceSeconds) * 1000 };
  };
}

/** JWKS from a URL or OIDC discovery; jose caches the set and refetches it for an unknown `kid`. */
function createKeyResolver(resolved: ResolvedJwtOptions): JWTVerifyGetKey {
  const remote = (url: URL) => createRemoteJWKSet(url, { cooldownDuration: resolved.jwksCooldownMs });
  let keySet: Promise<JWTVerifyGetKey> | undefined = resolved.jwksUrl ? Promise.resolve(remote(resolved.jwksUrl)) : undefined;
  const load = (): Promise<JWTVerifyGetKey> => {
    keySet ??= discoverJwksUri(resolved.issuer).then(remote, (error: unknown) => {
      // Retried by a later request, but not by every request while the provider is down.
      setTimeout(() => (keySet = undefined), 5000).unref();
      throw error;
    });
    return keySet;
  };
  return async (protectedHeader, token) => {
    let jwks: JWTVerifyGetKey;
    try {
      jwks = await load();
    } catch (error) {
      throw new KeysUnavailable('OIDC discovery failed', { cause: error });
    }
    try {
      return await jwks(protectedHeader, token);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) throw error;
      throw new KeysUnavailable('the key set could not be fetched or read', { cause: error });
    }
  };
}

/** `<issuer>/.well-known/openid-configuration` → `jwks_uri` (OpenID Connect Discovery 1.0 §4). */
async function discoverJwksUri(issuer: string): Promise<URL> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(5000) });
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
  // The discovered issuer must be the configured one, or another provider's keys could be trusted.
  if (document.issuer !== issuer) throw new Error(`${url} names issuer ${JSON.stringify(document.issuer)}, not ${JSON.stringify(issuer)}`);
  if (typeof document.jwks_uri !== 'string') throw new Error(`${url} has no jwks_uri`);
  return parseUrl(document.jwks_uri, `jwks_uri of ${url}`);
}

function unauthenticated(code: string, message: string, path = 'headers.authorization'): FwError {
  return new FwError('unauthenticated', message, { diagnostics: [{ path, code, message }] });
}

function verificationError(error: unknown, resolved: ResolvedJwtOptions): FwError {
  if (error instanceof KeysUnavailable) {
    return new FwError('unavailable', `The identity provider's signing keys are unavailable: ${error.message}.`, {
      cause: error.cause,
      diagnostics: [{ path: 'headers.authorization', code: 'keys_unavailable', message: 'The token could not be checked now; try again shortly.' }],
    });
  }
  if (error instanceof errors.JWTExpired) return unauthenticated('token_expired', 'The token has expired; get a fresh one from your identity provider.');
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return unauthenticated('issuer_mismatch', `The token was not issued by ${resolved.issuer}.`);
    if (error.claim === 'aud') return unauthenticated('audience_mismatch', `The token is not meant for this API (audience ${resolved.audience.join(' or ')}).`);
    if (error.claim === 'nbf') return unauthenticated('token_not_yet_valid', 'The token is not valid yet (nbf is in the future); check the clocks of the issuer and this server.');
    return unauthenticated('token_invalid', `The token's "${error.claim}" claim is ${error.reason === 'missing' ? 'missing' : 'invalid'}.`);
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return unauthenticated('alg_not_allowed', `The token's algorithm is not accepted here (allowed: ${resolved.algorithms.join(', ')}).`);
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
    return unauthenticated('unknown_key', "The token's signing key (kid) is not in the identity provider's key set.");
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return unauthenticated('bad_signature', "The token's signature does not verify.");
  return unauthenticated('token_invalid', 'The bearer token is not a well-formed JWT.');
}

/** A claim by name, or by dotted path when no claim has that exact name (Auth0-style names contain dots). */
function claimAt(payload: JWTPayload, path: string): unknown {
  if (Object.hasOwn(payload, path)) return payload[path];
  let value: unknown = payload;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function mapClaims(payload: JWTPayload, claims: ResolvedJwtOptions['claims']): Auth {
  const rawUser = claimAt(payload, claims.userId);
  const userId = typeof rawUser === 'number' ? String(rawUser) : rawUser;
  if (userId === undefined || userId === null) {
    throw unauthenticated('claim_missing', `The token has no "${claims.userId}" claim to identify the user (FW_JWT_CLAIM_USER_ID).`, `token.${claims.userId}`);
  }
  if (typeof userId !== 'string' || !identityPattern.test(userId)) {
    throw unauthenticated('claim_invalid', `The "${claims.userId}" claim must be a string of 1–200 characters.`, `token.${claims.userId}`);
  }
  const tenantId = claimAt(payload, claims.tenantId) ?? null;
  if (tenantId !== null && (typeof tenantId !== 'string' || !uuidPattern.test(tenantId))) {
    throw unauthenticated('claim_invalid', `The "${claims.tenantId}" claim must be a UUID (FW_JWT_CLAIM_TENANT_ID names the claim).`, `token.${claims.tenantId}`);
  }
  const role = claimAt(payload, claims.role) ?? null;
  if (role !== null && (typeof role !== 'string' || !identityPattern.test(role))) {
    throw unauthenticated('claim_invalid', `The "${claims.role}" claim must be a string (FW_JWT_CLAIM_ROLE names the claim).`, `token.${claims.role}`);
  }
  return { kind: 'user', userId, tenantId: tenantId?.toLowerCase() ?? null, role };
}
