/**
 * The Host allow-list of fw's dev API port, with the semantics of Vite's `server.allowedHosts`: without
 * it, any web page the developer visits could use DNS rebinding (a name of the attacker's that resolves
 * to 127.0.0.1) to read and write the dev database as any tenant through the dev headers.
 *
 * Allowed always: `localhost` and `*.localhost`, and IP addresses (a rebinding page's origin is a name,
 * never the IP itself), and a request without a Host (no browser sends one). More with `fw dev
 * --allowed-hosts` or `FW_ALLOWED_HOSTS` (comma-separated; a leading dot admits the name and its
 * subdomains, `.example.test`), or `true` for any — as with Vite, only on a network you trust. Under
 * `fw dev` with a Vite `web/`, the API port also admits what the app's `server.allowedHosts` admits.
 */
import { isIP } from 'node:net';
import type { Environment } from '../../runtime/config/environment.ts';
import { configOf, type FwConfig } from '../../runtime/config/resolve-config.ts';

export type AllowedHosts = true | readonly string[];

export function allowedHostsFromEnv(source?: FwConfig | Environment): AllowedHosts {
  return parseAllowedHosts(configOf(source).given('FW_ALLOWED_HOSTS'));
}

/** `a.test,.b.test` → `['a.test', '.b.test']`; `true` (or `*`) → any host; empty → loopback only. */
export function parseAllowedHosts(raw: string | undefined): AllowedHosts {
  const value = raw?.trim();
  if (!value) return [];
  if (value === 'true' || value === '*') return true;
  return value.split(',').map((host) => host.trim().toLowerCase()).filter(Boolean);
}

/** Both lists together (`true` wins, as in Vite's config merge). */
export function mergeAllowedHosts(a: AllowedHosts, b: AllowedHosts): AllowedHosts {
  if (a === true || b === true) return true;
  return [...new Set([...a, ...b.map((host) => host.toLowerCase())])];
}

/** Whether a request's `Host` header names a host this server answers. */
export function isHostAllowed(hostHeader: string | undefined, allowed: AllowedHosts): boolean {
  // No Host: not a browser (browsers always send one), so not a rebinding page; Vite does the same.
  if (allowed === true || hostHeader === undefined) return true;
  const hostname = hostnameOf(hostHeader);
  if (hostname === undefined) return false;
  if (isIP(hostname) !== 0) return true;
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) return true;
  return allowed.some((entry) => (entry.startsWith('.') ? hostname === entry.slice(1) || hostname.endsWith(entry) : hostname === entry));
}

/** `example.test:3100` → `example.test`, `[::1]:3100` → `::1`; undefined when missing or malformed. */
function hostnameOf(host: string | undefined): string | undefined {
  if (!host) return undefined;
  const value = host.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end > 0 ? value.slice(1, end) : undefined;
  }
  const hostname = value.replace(/:\d*$/, '').replace(/\.$/, '');
  return /^[a-z0-9._-]+$/.test(hostname) ? hostname : undefined;
}

const API_PORT_HINT = 'Add it with fw dev --allowed-hosts or FW_ALLOWED_HOSTS (comma-separated; ".example.test" admits subdomains; under fw dev, Vite’s server.allowedHosts counts too).';

/** The 403 body for a refused Host; `hint` names the setting that admits it. */
export function hostRefusal(hostHeader: string | undefined, hint: string = API_PORT_HINT): string {
  return JSON.stringify({
    ok: false,
    error: {
      code: 'forbidden',
      message: 'This host is not allowed to reach the fw dev server.',
      diagnostics: [
        {
          path: 'headers.host',
          code: 'host_not_allowed',
          message: `Host ${JSON.stringify(String(hostHeader ?? '').slice(0, 200))} is not allowed.`,
          hint,
        },
      ],
    },
  });
}
