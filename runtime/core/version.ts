import { readFileSync } from 'node:fs';

/**
 * fw's own version, read once from its package.json. Found by walking up from this module, which
 * lives at `runtime/core/` in a checkout and at `dist/runtime/core/` in the built package.
 */
function readVersion(): string {
  for (const relative of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'fwjs' && pkg.version) return pkg.version;
    } catch {
      // try the next candidate
    }
  }
  return '0.0.0-unknown';
}

export const fwVersion: string = readVersion();
