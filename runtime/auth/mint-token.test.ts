import { describe, expect, it } from 'vitest';
import { FwFailure } from '../core/failure.ts';
import { parseAuthConfig } from './config.ts';
import { createJwtAuthenticator } from './jwt.ts';
import { mintToken, signInLink } from './mint-token.ts';

const TENANT = '00000000-0000-4000-8000-00000000000b';
const hs = { FW_AUTH: 'jwt', FW_JWT_ISSUER: 'https://notes.example/', FW_JWT_AUDIENCE: 'notes-api,other-api', FW_JWT_HS_SECRET: 'x'.repeat(40) };

async function failureOf(promise: Promise<unknown>): Promise<FwFailure> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(FwFailure);
  return error as FwFailure;
}

describe('fw auth token (mintToken)', () => {
  it('signs a token the runtime of the same configuration accepts as that caller', async () => {
    const auth = parseAuthConfig(hs);
    const minted = await mintToken(auth, { userId: 'alice', tenantId: TENANT.toUpperCase(), role: 'member' });
    const authenticate = createJwtAuthenticator(auth as Exclude<typeof auth, string | undefined>);
    const result = await authenticate({ authorization: `Bearer ${minted.token}` });
    expect(result.auth).toEqual({ kind: 'user', userId: 'alice', tenantId: TENANT, role: 'member' });
    // Valid for FW_JWT_MAX_AGE (one day) by default, which the runtime still accepts.
    expect(Date.parse(minted.expiresAt) - Date.now()).toBeGreaterThan(86_400_000 - 60_000);
    expect(Date.parse(minted.expiresAt) - Date.now()).toBeLessThanOrEqual(86_400_000);
  });

  it("follows the app's claim names (a dotted path nests), algorithm and lifetime", async () => {
    const auth = parseAuthConfig({ ...hs, FW_JWT_ALGORITHMS: 'HS512', FW_JWT_CLAIM_TENANT_ID: 'org_id', FW_JWT_CLAIM_ROLE: 'app_metadata.role', FW_JWT_MAX_AGE: '600' });
    const minted = await mintToken(auth, { userId: 'bob', tenantId: TENANT, role: 'admin', expiresInSeconds: 120 }, Date.parse('2026-12-08T00:00:00Z'));
    const [header, payload] = minted.token.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
    expect(header).toEqual({ alg: 'HS512', typ: 'JWT' });
    expect(payload).toEqual({ sub: 'bob', org_id: TENANT, app_metadata: { role: 'admin' }, iss: 'https://notes.example/', aud: 'notes-api', iat: 1796688000, exp: 1796688120 });
    expect(minted.expiresAt).toBe('2026-12-08T00:02:00.000Z');
    expect((await failureOf(mintToken(auth, { userId: 'bob', expiresInSeconds: 601 }))).message).toBe('A token may live 1 to 600 seconds here (FW_JWT_MAX_AGE), not 601.');
  });

  it('says what to set when the app has no shared secret to sign with', async () => {
    for (const [env, why] of [
      [{}, 'FW_AUTH is not set.'],
      [{ FW_AUTH: 'none' }, 'FW_AUTH is none, not jwt.'],
      [{ FW_AUTH: 'dev-headers' }, 'FW_AUTH is dev-headers, not jwt.'],
      [{ FW_AUTH: 'jwt', FW_JWT_ISSUER: 'https://login.example.com/', FW_JWT_AUDIENCE: 'notes-api' }, 'FW_JWT_HS_SECRET is not set: tokens come from the identity provider (FW_JWT_ISSUER) whose keys the runtime verifies.'],
    ] as const) {
      const failure = await failureOf(mintToken(parseAuthConfig(env), { userId: 'alice' }));
      expect(failure.kind).toBe('auth_token_unavailable');
      expect(failure.message).toBe(`fw auth token signs with the app's own shared secret, and ${why}`);
      expect(failure.suggestions[0]).toBe('Set FW_AUTH=jwt, FW_JWT_ISSUER, FW_JWT_AUDIENCE and FW_JWT_HS_SECRET (32+ random characters) as fw start has them (docs/auth.md).');
    }
    const failure = await failureOf(mintToken(parseAuthConfig(hs), { userId: 'alice', tenantId: 'acme' }));
    expect([failure.kind, failure.message]).toEqual(['invalid_arguments', 'The tenant must be a UUID, not "acme".']);
  });

  it('makes a sign-in link whose fragment carries the token', () => {
    expect(signInLink('http://127.0.0.1:3000', 'a.b.c')).toBe('http://127.0.0.1:3000/#token=a.b.c');
    expect(signInLink('https://notes.example/app/?x=1#old', 'a.b.c')).toBe('https://notes.example/app/?x=1#token=a.b.c');
  });
});
