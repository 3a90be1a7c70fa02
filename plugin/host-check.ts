/**
 * The Host allow-list of fw's dev API port, with the semantics of Vite's `server.allowedHosts`: without
 * it, any web page the developer visits could use DNS rebinding (a name of the attacker's that resolves
 * to 127.0.0.1) to read and write the dev database as any tenant through the dev headers.
 *
 * Allowed by default: `localhost` and `*.localhost`, and IP addresses (a rebinding page's origin is a
 * name, never the IP itself). More with `FW_ALLOWED_HOSTS` (comma-separated; a leading dot admits the
 * name and its subdomains, `.example.test`), or `FW_ALLOWED_HOSTS=true` for any — as with Vite, only on
 * a network you trust.
 */
import { isIP } from 'node:net';

export type AllowedHosts = true | readonly string[];

export function allowedHostsFromEnv(env: NodeJS.ProcessEnv = process.env): AllowedHosts {
  const raw = env.FW_ALLOWED_HOSTS?.trim();
  if (!raw) return [];
  if (raw === 'true' || raw === '*') return true;
  return raw.split(',').map((host) => host.trim().toLowerCase()).filter(Boolean);
}

/** Whether a request's `Host` header names a host this server answers. */
export function isHostAllowed(hostHeader: string | undefined, allowed: AllowedHosts): boolean {
  if (allowed === true) return true;
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
  return /^[a-z0-9.-]+$/.test(hostname) ? hostname : undefined;
}

/** The 403 body for a refused Host. */
export function hostRefusal(hostHeader: string | undefined): string {
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
          hint: 'Add it to FW_ALLOWED_HOSTS (comma-separated; ".example.test" admits subdomains), as Vite’s server.allowedHosts does for the web port.',
        },
      ],
    },
  });
}
