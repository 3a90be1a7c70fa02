import { createReadStream, realpathSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { resolveConfig } from '../../runtime/config/resolve-config.ts';

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

/**
 * The Content-Security-Policy of the built app: its own scripts, styles (inline ones too: frameworks set
 * style attributes), images and fonts, API calls to its own origin, never framed. `FW_CSP` replaces it
 * (an empty value sends none) — e.g. to allow an API on another origin (`VITE_FW_URL`) in `connect-src`.
 */
export const DEFAULT_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'";

/**
 * Headers on every static answer, file or not. `X-Frame-Options: DENY` is for browsers without CSP
 * `frame-ancestors`; a policy that sets `frame-ancestors` to anything but `'none'` (an app meant to be
 * framed, through `FW_CSP`) drops it, so the two never disagree.
 */
export function staticSecurityHeaders(csp: string = resolveConfig().get('FW_CSP') ?? DEFAULT_CSP): Record<string, string> {
  const frameAncestors = /(?:^|;)\s*frame-ancestors\s+([^;]*)/i.exec(csp)?.[1]?.trim();
  const framable = frameAncestors !== undefined && frameAncestors !== "'none'";
  return {
    'x-content-type-options': 'nosniff',
    ...(framable ? {} : { 'x-frame-options': 'DENY' }),
    'referrer-policy': 'strict-origin-when-cross-origin',
    ...(csp ? { 'content-security-policy': csp } : {}),
  };
}

/**
 * Serves built web assets (`vite build` output) for GET/HEAD: a file when one matches, else — for a
 * page (`wantsPage`) — `index.html` (client-side routes), else 404. Hashed assets under
 * `assets/` are cached for a year; everything else is revalidated.
 *
 * Only what the build meant to publish: no dotfiles (a `.env` copied from `web/public`), and nothing
 * whose real path (symlinks resolved) leaves the build folder.
 */
export function createStaticHandler(dir: string): (req: IncomingMessage, res: ServerResponse) => void {
  const base = realpathSync(path.resolve(dir));
  const headers = staticSecurityHeaders();
  /** The real file to send; `refused` when the path exists but leads out of the build (a symlink). */
  const resolve = (file: string): RealFile | 'refused' | undefined => {
    try {
      const real = realpathSync(file);
      if (real !== base && !real.startsWith(base + path.sep)) return 'refused';
      const stats = statSync(real);
      return stats.isFile() ? { path: real, size: stats.size } : undefined;
    } catch {
      return undefined;
    }
  };
  return function serveStatic(req, res) {
    if (req.method !== 'GET' && req.method !== 'HEAD') return notFound(res, headers);
    let pathname: string;
    try {
      pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    } catch {
      return notFound(res, headers);
    }
    if (hasDotSegment(pathname) || pathname.includes('\0')) return notFound(res, headers);
    const file = resolve(path.join(base, pathname));
    if (file === 'refused') return notFound(res, headers);
    if (file) return send(req, res, file, pathname.startsWith('/assets/'), headers);
    const index = resolve(path.join(base, 'index.html'));
    if (index && index !== 'refused' && wantsPage(pathname, String(req.headers.accept ?? ''))) return send(req, res, index, false, headers);
    notFound(res, headers);
  };
}

/**
 * Whether a path that matches no file is a page of the app (answered with index.html for client-side
 * routing): what a browser asks for as HTML, and — for `curl` and other clients that accept anything —
 * `/` and extensionless paths. A missing `/assets/app.js` stays a 404.
 */
function wantsPage(pathname: string, accept: string): boolean {
  if (accept.includes('text/html')) return true;
  const anything = accept === '' || accept.split(',').some((type) => type.trim().startsWith('*/*'));
  return anything && !path.posix.basename(pathname).includes('.');
}

/** A path segment that starts with a dot (`/.env`, `/.git/config`, `/a/../b`), except `/.well-known/`. */
function hasDotSegment(pathname: string): boolean {
  return pathname.split(/[/\\]/).some((segment, i, all) => segment.startsWith('.') && !(segment === '.well-known' && i === 1 && all.length > 2));
}

interface RealFile {
  path: string;
  size: number;
}

function send(req: IncomingMessage, res: ServerResponse, file: RealFile, immutable: boolean, headers: Record<string, string>): void {
  res.writeHead(200, {
    ...headers,
    'content-type': contentTypes[path.extname(file.path).toLowerCase()] ?? 'application/octet-stream',
    'content-length': String(file.size),
    'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
  });
  if (req.method === 'HEAD') res.end();
  // A file that vanishes mid-send (a redeploy) ends this answer, not the process.
  else createReadStream(file.path).on('error', () => res.destroy()).pipe(res);
}

function notFound(res: ServerResponse, headers: Record<string, string>): void {
  res.writeHead(404, { ...headers, 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ ok: false, error: { code: 'not_found', message: 'Not found.', diagnostics: [] } }));
}
