/**
 * A local identity provider for tests: a real HTTP server serving OIDC discovery
 * (`/.well-known/openid-configuration`) and a key set (`/jwks.json`), and signing tokens with its keys.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';

export interface TestKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
}

export interface SignOptions {
  /** Default: the first published key. */
  key?: TestKey;
  /** Seconds from now (default 60); negative for an expired token. */
  expiresIn?: number;
  /** Seconds from now for `nbf`. */
  notBefore?: number;
  /** Seconds from now for `iat` (default 0: issued now). */
  issuedAt?: number;
  /** "Now" in epoch ms (default Date.now()): to sign for a runtime on a test clock. */
  now?: number;
  issuer?: string;
  audience?: string;
}

export interface TestIssuer {
  /** `http://127.0.0.1:<port>`: the `iss` of its tokens and the base of discovery. */
  readonly issuer: string;
  readonly jwksUrl: string;
  readonly audience: string;
  /** How often each document was fetched. */
  readonly fetches: { discovery: number; jwks: number };
  /** A new key pair, not yet published. */
  generateKey(alg?: string): Promise<TestKey>;
  /** Serves exactly these keys from now on (key rotation). */
  publish(...keys: TestKey[]): void;
  readonly published: readonly TestKey[];
  sign(claims: JWTPayload, options?: SignOptions): Promise<string>;
  close(): Promise<void>;
}

export async function startTestIssuer(alg = 'RS256'): Promise<TestIssuer> {
  let published: TestKey[] = [];
  const fetches = { discovery: 0, jwks: 0 };
  const server = createServer((req, res) => {
    const json = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/.well-known/openid-configuration') {
      fetches.discovery++;
      return json({ issuer, jwks_uri: `${issuer}/jwks.json`, id_token_signing_alg_values_supported: [alg] });
    }
    if (req.url === '/jwks.json') {
      fetches.jwks++;
      return json({ keys: published.map((key) => key.jwk) });
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const audience = 'fw-test-api';

  const generateKey = async (keyAlg = alg): Promise<TestKey> => {
    const { privateKey, publicKey } = await generateKeyPair(keyAlg, { extractable: true });
    const kid = randomUUID();
    return { kid, alg: keyAlg, privateKey, publicKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: keyAlg, use: 'sig' } };
  };
  published = [await generateKey()];

  return {
    issuer,
    jwksUrl: `${issuer}/jwks.json`,
    audience,
    fetches,
    generateKey,
    publish: (...keys) => {
      published = keys;
    },
    get published() {
      return published;
    },
    async sign(claims, options = {}) {
      const key = options.key ?? published[0]!;
      const now = Math.floor((options.now ?? Date.now()) / 1000);
      const jwt = new SignJWT({ sub: 'user-1', ...claims })
        .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
        .setIssuer(options.issuer ?? issuer)
        .setAudience(options.audience ?? audience)
        .setIssuedAt(now + (options.issuedAt ?? 0))
        .setExpirationTime(now + (options.expiresIn ?? 60));
      if (options.notBefore !== undefined) jwt.setNotBefore(now + options.notBefore);
      return jwt.sign(key.privateKey);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
