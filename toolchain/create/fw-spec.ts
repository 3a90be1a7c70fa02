import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fwPackageRoot } from '../../plugin/package-root.ts';
import { fwVersion } from '../../runtime/core/version.ts';

/**
 * The `fwjs` dependency of a new app: where the running fw came from, so the app installs the same fw.
 *
 * - From a checkout (not under node_modules): `file:` that checkout.
 * - Installed from a packed tarball (`npx --package ./fwjs-….tgz fw create`, `npm exec` of create-fwjs
 *   beside it, `npm install ./fwjs-….tgz`): `file:` that tarball, as npm recorded it in the lock of the
 *   folder it installed into (its `node_modules/.package-lock.json`) — a registry range would name a
 *   version that may not be published.
 * - Installed from the registry (or anything else): `^` this version.
 */
export function defaultFwSpec(root: string = fwPackageRoot()): string {
  const parts = root.split(path.sep);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return `file:${root}`;
  const project = parts.slice(0, at).join(path.sep) || path.sep;
  const resolved = installedFrom(project, parts.slice(at).join('/'));
  if (resolved?.startsWith('file:')) {
    const target = path.resolve(project, resolved.slice('file:'.length));
    if (existsSync(target)) return `file:${target}`;
  }
  return `^${fwVersion}`;
}

/** What npm installed `node_modules/…` in `project` from (the hidden lock, else the project's lock). */
function installedFrom(project: string, location: string): string | undefined {
  for (const lock of [path.join(project, 'node_modules/.package-lock.json'), path.join(project, 'package-lock.json')]) {
    try {
      const entry = (JSON.parse(readFileSync(lock, 'utf8')) as { packages?: Record<string, { resolved?: string }> }).packages?.[location];
      if (entry?.resolved) return entry.resolved;
    } catch {
      // No lock here, or not npm's: the next, then the registry's version.
    }
  }
  return undefined;
}
