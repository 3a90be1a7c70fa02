import { exportSPKI, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestIssuer, type TestIssuer } from '../../e2e/support/test-issuer.ts';
import { FwError, isFwError } from '../core/errors.ts';
import { FwFailure } from '../core/failure.ts';
import type { Authenticator } from './authenticator.ts';
import { parseAuthConfig } from './config.ts';
import { createJwtAuthenticator, type JwtAuthOptions } from './jwt.ts';

const TENANT = '00000000-0000-4000-8000-00000000000A';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The FwError a rejected authentication carries, checked not to echo the token. */
async function refusal(authenticate: Authenticator, token: string): Promise<FwError> {
  try {
    await authenticate(bearer(token));
  } catch (error) {
    expect(isFwError(error)).toBe(true);
    const fwError = error as FwError;
    expect(JSON.stringify({ message: fwError.message, diagnostics: fwError.diagnostics })).not.toContain(token);
    expect(JSON.stringify({ message: fwError.message })).not.toContain(token.split('.')[1]!);
    return fwError;
  }
  throw new Error('the token was accepted');
}

async function diagnosticOf(authenticate: Authenticator, token: string): Promise<string | undefined> {
  const error = await refusal(authenticate, token);
  expect(error.code).toBe('unauthenticated');
  expect(error.status).toBe(401);
  return error.diagnostics[0]?.code;
}

describe('JWT auth against a local identity provider', () => {
  let idp: TestIssuer;
  let options: JwtAuthOptions;
  let authenticate: Authenticator;

  beforeAll(async () => {
    idp = await startTestIssuer('RS256');
    options = { kind: 'jwt', issuer: idp.issuer, audience: idp.audience, jwksUrl: idp.jwksUrl };
    authenticate = createJwtAuthenticator(options);
  });
  afterAll(() => idp.close());

  it('accepts a valid token and maps sub, tenant_id and role', async () => {
    const token = await idp.sign({ sub: 'alice', tenant_id: TENANT, role: 'admin' }, { expiresIn: 120 });
    const result = await authenticate(bearer(token));
    expect(result.auth).toEqual({ kind: 'user', userId: 'alice', tenantId: TENANT.toLowerCase(), role: 'admin' });
    // exp plus the default clock tolerance of 30 s.
    const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp as number;
    expect(result.expiresAt).toBe((exp + 30) * 1000);
  });

  it('treats a request without Authorization as anonymous, and refuses other schemes', async () => {
    expect((await authenticate({})).auth).toMatchObject({ kind: 'anonymous', userId: null });
    expect(await diagnosticOf((h) => authenticate({ ...h, authorization: 'Basic YWxpY2U6cHc=' }), 'x')).toBe('token_invalid');
    expect(await diagnosticOf(authenticate, 'not-a-jwt')).toBe('token_invalid');
  });

  it('maps custom claim paths: dotted, and names that contain dots', async () => {
    const custom = createJwtAuthenticator({
      ...options,
      claims: { userId: 'email', tenantId: 'org.id', role: 'https://fw.example/role' },
    });
    const token = await idp.sign({ email: 'bo@example.com', org: { id: TENANT }, 'https://fw.example/role': 'support' });
    expect((await custom(bearer(token))).auth).toEqual({ kind: 'user', userId: 'bo@example.com', tenantId: TENANT.toLowerCase(), role: 'support' });

    const supabaseLike = createJwtAuthenticator({ ...options, claims: { role: 'app_metadata.role' } });
    const nested = await idp.sign({ app_metadata: { role: 'owner' } });
    expect((await supabaseLike(bearer(nested))).auth).toMatchObject({ userId: 'user-1', tenantId: null, role: 'owner' });
  });

  // On a fixed clock (the authenticator's test hook), so the boundaries are exact and no margin depends
  // on how fast the machine signs and verifies.
  const NOW = Date.parse('2026-11-25T10:00:00Z');
  const fixedClock = { now: () => NOW, at: () => () => {} };

  it('refuses an expired token, and allows the clock tolerance', async () => {
    const tolerant = createJwtAuthenticator(options, fixedClock);
    const strict = createJwtAuthenticator({ ...options, clockToleranceSeconds: 0 }, fixedClock);
    const expiredAgo = (seconds: number) => idp.sign({}, { expiresIn: -seconds, now: NOW });
    // The default tolerance is 30 s: a token 29 s past `exp` is still accepted, one 30 s past is not.
    expect((await tolerant(bearer(await expiredAgo(29)))).auth.userId).toBe('user-1');
    expect(await diagnosticOf(tolerant, await expiredAgo(30))).toBe('token_expired');
    // Without tolerance a token ends at its `exp`.
    expect((await strict(bearer(await expiredAgo(-1)))).auth.userId).toBe('user-1');
    expect(await diagnosticOf(strict, await expiredAgo(0))).toBe('token_expired');
  });

  it('refuses a token that lives longer than the maximum age, by its exp or its iat', async () => {
    const day = 86_400;
    const capped = createJwtAuthenticator(options, fixedClock);
    // exp centuries away: refused, whenever it was issued.
    expect(await diagnosticOf(capped, await idp.sign({}, { expiresIn: 300 * 365 * day, now: NOW }))).toBe('token_lifetime_too_long');
    // Exactly the maximum (plus the 30 s tolerance) is still accepted; one second more is not.
    expect((await capped(bearer(await idp.sign({}, { expiresIn: day + 30, now: NOW })))).auth.userId).toBe('user-1');
    expect(await diagnosticOf(capped, await idp.sign({}, { expiresIn: day + 31, now: NOW }))).toBe('token_lifetime_too_long');
    // Issued two days ago, valid for another hour: too old.
    expect(await diagnosticOf(capped, await idp.sign({}, { expiresIn: 2 * day + 3600, now: NOW - 2 * day * 1000 }))).toBe('token_too_old');
    // Configurable (FW_JWT_MAX_AGE), within bounds.
    const hour = createJwtAuthenticator({ ...options, maxTokenAgeSeconds: 3600 }, fixedClock);
    expect(await diagnosticOf(hour, await idp.sign({}, { expiresIn: 2 * 3600, now: NOW }))).toBe('token_lifetime_too_long');
    expect(() => createJwtAuthenticator({ ...options, maxTokenAgeSeconds: 10 })).toThrow(/FW_JWT_MAX_AGE/);
    expect(parseAuthConfig({ FW_AUTH: 'jwt', FW_JWT_ISSUER: idp.issuer, FW_JWT_AUDIENCE: 'a', FW_JWT_MAX_AGE: '3600' })).toMatchObject({ maxTokenAgeSeconds: 3600 });
  });

  it('refuses a token issued in the future beyond the clock tolerance (a year ahead, with an exp an hour away)', async () => {
    const tolerant = createJwtAuthenticator(options, fixedClock);
    const year = 365 * 86_400;
    expect(await diagnosticOf(tolerant, await idp.sign({}, { issuedAt: year, expiresIn: 3600, now: NOW }))).toBe('token_issued_in_future');
    expect(await diagnosticOf(tolerant, await idp.sign({}, { issuedAt: 31, expiresIn: 3600, now: NOW }))).toBe('token_issued_in_future');
    // Within the 30 s tolerance: accepted.
    expect((await tolerant(bearer(await idp.sign({}, { issuedAt: 30, expiresIn: 3600, now: NOW })))).auth.userId).toBe('user-1');
  });

  it('refuses a token that is not valid yet', async () => {
    const tolerant = createJwtAuthenticator(options, fixedClock);
    expect(await diagnosticOf(tolerant, await idp.sign({}, { notBefore: 31, now: NOW }))).toBe('token_not_yet_valid');
    expect((await tolerant(bearer(await idp.sign({}, { notBefore: 30, now: NOW })))).auth.userId).toBe('user-1');
  });

  it('refuses a wrong issuer and a wrong audience', async () => {
    expect(await diagnosticOf(authenticate, await idp.sign({}, { issuer: 'https://evil.example' }))).toBe('issuer_mismatch');
    expect(await diagnosticOf(authenticate, await idp.sign({}, { audience: 'another-api' }))).toBe('audience_mismatch');
  });

  it('refuses alg "none"', async () => {
    const now = Math.floor(Date.now() / 1000);
    const payload = { sub: 'mallory', iss: idp.issuer, aud: idp.audience, exp: now + 60, tenant_id: TENANT };
    expect(await diagnosticOf(authenticate, `${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}.`)).toBe('alg_not_allowed');
    expect(await diagnosticOf(authenticate, `${b64({ alg: 'none' })}.${b64(payload)}`)).toBe('token_invalid');
  });

  it('refuses HS256 signed with the public key (algorithm confusion)', async () => {
    const key = idp.published[0]!;
    const pem = await exportSPKI(key.publicKey);
    const now = Math.floor(Date.now() / 1000);
    const forged = await new SignJWT({ sub: 'mallory', role: 'admin' })
      .setProtectedHeader({ alg: 'HS256', kid: key.kid })
      .setIssuer(idp.issuer)
      .setAudience(idp.audience)
      .setExpirationTime(now + 60)
      .sign(new TextEncoder().encode(pem));
    expect(await diagnosticOf(authenticate, forged)).toBe('alg_not_allowed');
  });

  it('refuses a tampered payload', async () => {
    const [header, payload, signature] = (await idp.sign({ sub: 'alice', role: 'member' })).split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const tampered = `${header}.${b64({ ...claims, role: 'admin' })}.${signature}`;
    expect(await diagnosticOf(authenticate, tampered)).toBe('bad_signature');
  });

  it('refuses a token signed with a key the provider does not publish', async () => {
    const stranger = await idp.generateKey();
    expect(await diagnosticOf(authenticate, await idp.sign({}, { key: stranger }))).toBe('unknown_key');
  });

  it('follows key rotation: an unknown kid refetches the key set', async () => {
    const rotating = createJwtAuthenticator({ ...options, jwksCooldownMs: 0 });
    const oldKey = idp.published[0]!;
    expect((await rotating(bearer(await idp.sign({ sub: 'before' })))).auth.userId).toBe('before');
    const fetchesBefore = idp.fetches.jwks;

    const newKey = await idp.generateKey();
    idp.publish(newKey);
    try {
      expect((await rotating(bearer(await idp.sign({ sub: 'after' }, { key: newKey })))).auth.userId).toBe('after');
      expect(idp.fetches.jwks).toBe(fetchesBefore + 1);
      // The retired key is gone from the set once it has been refetched.
      expect(await diagnosticOf(rotating, await idp.sign({}, { key: oldKey }))).toBe('unknown_key');
    } finally {
      idp.publish(oldKey);
    }
  });

  it('discovers the key set through OIDC discovery, once', async () => {
    const discovering = createJwtAuthenticator({ kind: 'jwt', issuer: idp.issuer, audience: idp.audience });
    const before = idp.fetches.discovery;
    expect((await discovering(bearer(await idp.sign({ sub: 'one' })))).auth.userId).toBe('one');
    expect((await discovering(bearer(await idp.sign({ sub: 'two' })))).auth.userId).toBe('two');
    expect(idp.fetches.discovery).toBe(before + 1);
  });

  it('answers 503 keys_unavailable (not 401) when discovery fails', async () => {
    const broken = createJwtAuthenticator({ kind: 'jwt', issuer: `${idp.issuer}/no-such-tenant`, audience: idp.audience });
    const error = await refusal(broken, await idp.sign({}));
    expect(error.code).toBe('unavailable');
    expect(error.diagnostics[0]?.code).toBe('keys_unavailable');
  });

  it('refuses a tenant claim that is not a UUID, and a token without a user id', async () => {
    const error = await refusal(authenticate, await idp.sign({ tenant_id: 'acme' }));
    expect(error.diagnostics[0]).toMatchObject({ code: 'claim_invalid', path: 'token.tenant_id' });
    const noUser = createJwtAuthenticator({ ...options, claims: { userId: 'uid' } });
    expect(await diagnosticOf(noUser, await idp.sign({}))).toBe('claim_missing');
    expect(await diagnosticOf(authenticate, await idp.sign({ role: ['admin'] }))).toBe('claim_invalid');
  });

  it('verifies ES256 keys', async () => {
    const es = await startTestIssuer('ES256');
    try {
      const esAuth = createJwtAuthenticator({ kind: 'jwt', issuer: es.issuer, audience: es.audience });
      expect((await esAuth(bearer(await es.sign({ sub: 'ec-user' })))).auth.userId).toBe('ec-user');
      // A key set of another provider does not verify this one's tokens.
      expect(await diagnosticOf(authenticate, await es.sign({}, { issuer: idp.issuer, audience: idp.audience }))).toBe('unknown_key');
    } finally {
      await es.close();
    }
  });

  it('accepts HS256 only with an explicitly configured secret', async () => {
    const secret = 'a-test-secret-that-is-32-chars-long!';
    const hs = createJwtAuthenticator({ kind: 'jwt', issuer: 'https://auth.example', audience: 'api', hsSecret: secret });
    const now = Math.floor(Date.now() / 1000);
    const sign = (key: string) =>
      new SignJWT({ sub: 'hs-user' }).setProtectedHeader({ alg: 'HS256' }).setIssuer('https://auth.example').setAudience('api').setExpirationTime(now + 60).sign(new TextEncoder().encode(key));
    expect((await hs(bearer(await sign(secret)))).auth.userId).toBe('hs-user');
    expect(await diagnosticOf(hs, await sign(`${secret}x`))).toBe('bad_signature');
    expect(await diagnosticOf(hs, await idp.sign({}, { issuer: 'https://auth.example', audience: 'api' }))).toBe('alg_not_allowed');
  });

  it('refuses unsafe or incomplete options at startup', () => {
    const base = { kind: 'jwt' as const, issuer: idp.issuer, audience: idp.audience };
    expect(() => createJwtAuthenticator({ ...base, algorithms: ['none'] })).toThrow(/never accepted/);
    expect(() => createJwtAuthenticator({ ...base, algorithms: ['RS256', 'HS256'] })).toThrow(/needs a shared secret/);
    expect(() => createJwtAuthenticator({ ...base, algorithms: ['XX1'] })).toThrow(/unknown algorithm/);
    expect(() => createJwtAuthenticator({ ...base, audience: [] })).toThrow(/no audience/);
    expect(() => createJwtAuthenticator({ ...base, hsSecret: 'short' })).toThrow(/32 characters/);
    expect(() => createJwtAuthenticator({ ...base, issuer: 'http://login.example.com' })).toThrow(/https/);
    expect(() => createJwtAuthenticator({ ...base, clockToleranceSeconds: -1 })).toThrow(/out of range/);
    expect(() => createJwtAuthenticator({ ...base, algorithms: ['none'] })).toThrow(FwFailure);
  });
});

describe('parseAuthConfig', () => {
  const failure = (env: Record<string, string>) => {
    try {
      parseAuthConfig(env);
    } catch (error) {
      expect(error).toBeInstanceOf(FwFailure);
      return error as FwFailure;
    }
    throw new Error('no failure');
  };

  it('is undefined when nothing is set, and reads the simple modes', () => {
    expect(parseAuthConfig({})).toBeUndefined();
    expect(parseAuthConfig({ FW_AUTH: 'none' })).toBe('none');
    expect(parseAuthConfig({ FW_AUTH: 'dev-headers' })).toBe('dev-headers');
  });

  it('reads every JWT setting', () => {
    expect(
      parseAuthConfig({
        FW_AUTH: 'jwt',
        FW_JWT_ISSUER: 'https://login.example.com/',
        FW_JWT_AUDIENCE: 'notes-api, admin-api',
        FW_JWT_JWKS_URL: 'https://login.example.com/keys',
        FW_JWT_ALGORITHMS: 'RS256,ES256',
        FW_JWT_CLOCK_TOLERANCE: '10',
        FW_JWT_CLAIM_USER_ID: 'email',
        FW_JWT_CLAIM_TENANT_ID: 'org.id',
        FW_JWT_CLAIM_ROLE: 'app_metadata.role',
      }),
    ).toEqual({
      kind: 'jwt',
      issuer: 'https://login.example.com/',
      audience: ['notes-api', 'admin-api'],
      jwksUrl: 'https://login.example.com/keys',
      algorithms: ['RS256', 'ES256'],
      clockToleranceSeconds: 10,
      claims: { userId: 'email', tenantId: 'org.id', role: 'app_metadata.role' },
    });
  });

  it('names what is missing or wrong', () => {
    expect(failure({ FW_AUTH: 'jwt' }).message).toMatch(/FW_JWT_ISSUER and FW_JWT_AUDIENCE/);
    expect(failure({ FW_AUTH: 'jwt', FW_JWT_ISSUER: 'https://a.example' }).message).toMatch(/FW_JWT_AUDIENCE/);
    expect(failure({ FW_AUTH: 'oauth' }).message).toMatch(/jwt, dev-headers or none/);
    expect(failure({ FW_JWT_ISSUER: 'https://a.example' }).message).toMatch(/FW_AUTH is not/);
    expect(failure({ FW_AUTH: 'none', FW_JWT_AUDIENCE: 'x' }).message).toMatch(/FW_AUTH=none/);
    const jwt = { FW_AUTH: 'jwt', FW_JWT_ISSUER: 'https://a.example', FW_JWT_AUDIENCE: 'api' };
    expect(failure({ ...jwt, FW_JWT_CLOCK_TOLERANCE: 'soon' }).message).toMatch(/whole seconds/);
    expect(failure({ ...jwt, FW_JWT_ALGORITHMS: 'HS256' }).message).toMatch(/FW_JWT_HS_SECRET/);
    expect(failure({ ...jwt, FW_JWT_ALGORITHMS: 'none' }).kind).toBe('auth_config_invalid');
  });
});
