import { FwFailure } from '../core/failure.ts';
import type { Environment } from '../config/environment.ts';
import { configOf, type FwConfig } from '../config/resolve-config.ts';
import type { AuthOption } from './authenticator.ts';
import { type JwtAuthOptions, resolveJwtOptions } from './jwt.ts';

/** The environment variables read by {@link parseAuthConfig} (docs/auth.md). */
export const AUTH_ENV = [
  'FW_AUTH',
  'FW_JWT_ISSUER',
  'FW_JWT_AUDIENCE',
  'FW_JWT_JWKS_URL',
  'FW_JWT_ALGORITHMS',
  'FW_JWT_HS_SECRET',
  'FW_JWT_CLOCK_TOLERANCE',
  'FW_JWT_MAX_AGE',
  'FW_JWT_CLAIM_USER_ID',
  'FW_JWT_CLAIM_TENANT_ID',
  'FW_JWT_CLAIM_ROLE',
] as const;

/**
 * Reads the auth option from the environment: `FW_AUTH=jwt|dev-headers|none` and the `FW_JWT_*`
 * settings. Undefined when nothing is set (the runtime's default applies); throws FwFailure
 * `auth_config_invalid` naming the missing or malformed variable.
 *
 * @example
 *   // FW_AUTH=jwt FW_JWT_ISSUER=https://login.example.com/ FW_JWT_AUDIENCE=notes-api
 *   createRuntimeHandler({ app, db, dev: false, auth: parseAuthConfig(resolveConfig()) });
 */
export function parseAuthConfig(source?: FwConfig | Environment): AuthOption | undefined {
  const config = configOf(source);
  // As set: the variables' defaults (variables.ts) are jwt.ts's, applied there.
  const value = (name: (typeof AUTH_ENV)[number]) => config.given(name);
  const mode = value('FW_AUTH');
  const jwtVariables = AUTH_ENV.filter((name) => name !== 'FW_AUTH' && value(name) !== undefined);
  if (mode === undefined) {
    if (jwtVariables.length === 0) return undefined;
    throw new FwFailure('auth_config_invalid', `${jwtVariables.join(', ')} ${jwtVariables.length === 1 ? 'is' : 'are'} set but FW_AUTH is not.`, {
      suggestions: ['Set FW_AUTH=jwt to verify bearer tokens.', 'See docs/auth.md.'],
    });
  }
  if (mode === 'dev-headers' || mode === 'none') {
    if (jwtVariables.length > 0) {
      throw new FwFailure('auth_config_invalid', `FW_AUTH=${mode} but ${jwtVariables.join(', ')} ${jwtVariables.length === 1 ? 'is' : 'are'} set too.`, {
        suggestions: ['Set FW_AUTH=jwt, or unset the FW_JWT_* variables.'],
      });
    }
    return mode;
  }
  if (mode !== 'jwt') {
    throw new FwFailure('auth_config_invalid', `FW_AUTH must be jwt, dev-headers or none, not "${mode}".`, { suggestions: ['FW_AUTH=jwt'] });
  }
  const issuer = value('FW_JWT_ISSUER');
  const audience = list(value('FW_JWT_AUDIENCE'));
  const missing = [...(issuer ? [] : ['FW_JWT_ISSUER']), ...(audience?.length ? [] : ['FW_JWT_AUDIENCE'])];
  if (missing.length > 0) {
    throw new FwFailure('auth_config_invalid', `FW_AUTH=jwt needs ${missing.join(' and ')}.`, {
      suggestions: ['FW_JWT_ISSUER=https://login.example.com/  (the `iss` of your tokens)', 'FW_JWT_AUDIENCE=notes-api  (the `aud` of your tokens)', 'See docs/auth.md.'],
    });
  }
  const options: JwtAuthOptions = { kind: 'jwt', issuer: issuer!, audience: audience! };
  const jwksUrl = value('FW_JWT_JWKS_URL');
  if (jwksUrl) options.jwksUrl = jwksUrl;
  const algorithms = list(value('FW_JWT_ALGORITHMS'));
  if (algorithms) options.algorithms = algorithms;
  const secret = value('FW_JWT_HS_SECRET');
  if (secret) options.hsSecret = secret;
  const tolerance = value('FW_JWT_CLOCK_TOLERANCE');
  if (tolerance !== undefined) {
    if (!/^\d{1,3}s?$/.test(tolerance)) {
      throw new FwFailure('auth_config_invalid', `FW_JWT_CLOCK_TOLERANCE must be whole seconds, not "${tolerance}".`, { suggestions: ['FW_JWT_CLOCK_TOLERANCE=30'] });
    }
    options.clockToleranceSeconds = Number.parseInt(tolerance, 10);
  }
  const maxAge = value('FW_JWT_MAX_AGE');
  if (maxAge !== undefined) {
    if (!/^\d{1,9}s?$/.test(maxAge)) {
      throw new FwFailure('auth_config_invalid', `FW_JWT_MAX_AGE must be whole seconds, not "${maxAge}".`, { suggestions: ['FW_JWT_MAX_AGE=86400'] });
    }
    options.maxTokenAgeSeconds = Number.parseInt(maxAge, 10);
  }
  const claims: NonNullable<JwtAuthOptions['claims']> = {};
  const userId = value('FW_JWT_CLAIM_USER_ID');
  const tenantId = value('FW_JWT_CLAIM_TENANT_ID');
  const role = value('FW_JWT_CLAIM_ROLE');
  if (userId) claims.userId = userId;
  if (tenantId) claims.tenantId = tenantId;
  if (role) claims.role = role;
  if (Object.keys(claims).length > 0) options.claims = claims;
  // Everything else (algorithm names, URLs, secret length) fails here, at startup.
  resolveJwtOptions(options);
  return options;
}

function list(raw: string | undefined): string[] | undefined {
  return raw
    ?.split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}
