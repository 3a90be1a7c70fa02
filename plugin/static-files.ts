import { createReadStream, existsSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';

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
 * Serves built web assets (`vite build` output) for GET/HEAD: a file when one matches, else — for
 * requests that accept HTML — `index.html` (client-side routes), else 404. Hashed assets under
 * `assets/` are cached for a year; everything else is revalidated.
 */
export function createStaticHandler(dir: string): (req: IncomingMessage, res: ServerResponse) => void {
  const base = path.resolve(dir);
  return function serveStatic(req, res) {
    if (req.method !== 'GET' && req.method !== 'HEAD') return notFound(res);
    let pathname: string;
    try {
      pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    } catch {
      return notFound(res);
    }
    const file = path.join(base, pathname);
    // path.join normalises `..`; anything that lands outside the build is not ours to serve.
    if (file.startsWith(base + path.sep) && isFile(file)) return send(req, res, file, pathname.startsWith('/assets/'));
    if (String(req.headers.accept ?? '').includes('text/html') && isFile(path.join(base, 'index.html'))) return send(req, res, path.join(base, 'index.html'), false);
    notFound(res);
  };
}

function isFile(file: string): boolean {
  return existsSync(file) && statSync(file).isFile();
}

function send(req: IncomingMessage, res: ServerResponse, file: string, immutable: boolean): void {
  res.writeHead(200, {
    'content-type': contentTypes[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
    'content-length': String(statSync(file).size),
    'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    'x-content-type-options': 'nosniff',
  });
  if (req.method === 'HEAD') res.end();
  else createReadStream(file).pipe(res);
}

function notFound(res: ServerResponse): void {
  res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ ok: false, error: { code: 'not_found', message: 'Not found.', diagnostics: [] } }));
}
