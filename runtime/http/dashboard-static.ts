import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { FwError } from '../core/errors.ts';
import { TRACE_HEADER } from '../core/trace.ts';

export const DASHBOARD_PREFIX = '/_fw/dashboard/';

/**
 * Where the prebuilt dashboard is: `dist/dashboard-ui/` beside the compiled runtime (the package), or
 * the same folder under the repository when fw runs from its sources (tests). Found once, when first asked.
 */
let root: string | null | undefined;
function dashboardRoot(): string | null {
  if (root !== undefined) return root;
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.resolve(here, '../../dashboard-ui'), path.resolve(here, '../../dist/dashboard-ui')];
  root = candidates.find((dir) => existsSync(path.join(dir, 'index.html'))) ?? null;
  return root;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
};

// The dashboard loads only its own files and talks only to its own origin; nobody may frame it.
const HEADERS = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

/** Sends one file of the dashboard; any path without an extension is the app's page (its views are `#` routes). */
export async function serveDashboardFile(req: IncomingMessage, res: ServerResponse, rest: string, traceId: string): Promise<void> {
  const dir = dashboardRoot();
  if (!dir) {
    throw new FwError('unavailable', 'The dashboard is not built: fw was installed without dist/dashboard-ui.', {
      diagnostics: [{ path: 'url', code: 'dashboard_not_built', message: 'In a checkout of fw, run npm run build.' }],
    });
  }
  const relative = /\.[a-z0-9]+$/i.test(rest) ? rest : 'index.html';
  const file = path.resolve(dir, relative);
  const type = TYPES[path.extname(file)];
  if (!file.startsWith(dir + path.sep) || !type) throw new FwError('not_found', `No dashboard file ${rest.slice(0, 80)}.`);
  const body = await readFile(file).catch(() => {
    throw new FwError('not_found', `No dashboard file ${rest.slice(0, 80)}.`);
  });
  res.writeHead(200, {
    [TRACE_HEADER]: traceId,
    ...HEADERS,
    'content-type': type,
    'content-length': String(body.length),
    // Vite names assets by their content hash; the page itself must be fetched fresh to find new ones.
    'cache-control': relative.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
