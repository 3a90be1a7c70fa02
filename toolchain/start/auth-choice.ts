import { FwFailure } from '../../runtime/core/failure.ts';
import type { FwConfig } from '../../runtime/config/resolve-config.ts';

/**
 * `fw start` serves real callers, so how they sign in must be a choice, not a default: without
 * `FW_AUTH` the runtime would identify nobody and answer 401 to every entry but the `public` ones —
 * a server that starts fine and works for no one. `FW_AUTH=none` says that is intended (a public API).
 * The rest of the auth settings are checked where they are parsed (runtime/auth/config.ts).
 *
 * @example
 *   requireAuthChoice(resolveConfig()) // throws FwFailure 'auth_not_configured' when FW_AUTH is unset
 */
export function requireAuthChoice(config: FwConfig): void {
  if (config.given('FW_AUTH') !== undefined) return;
  throw new FwFailure(
    'auth_not_configured',
    'auth_not_configured: FW_AUTH is not set, so fw start would answer 401 to every non-public entry; set FW_AUTH=jwt (with FW_JWT_ISSUER and FW_JWT_AUDIENCE), or FW_AUTH=none to serve anonymous callers on purpose.',
    {
      suggestions: [
        'FW_AUTH=jwt FW_JWT_ISSUER=https://login.example.com/ FW_JWT_AUDIENCE=my-api fw start  (docs/auth.md)',
        'FW_AUTH=none fw start  (intended: only public entries answer)',
      ],
    },
  );
}
