import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** fw's own package root: one level up from `plugin/` in a checkout, two from `dist/plugin/` when built. */
export function fwPackageRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (const candidate of [path.resolve(here, '..'), path.resolve(here, '../..')]) {
    if (existsSync(path.join(candidate, 'templates')) && existsSync(path.join(candidate, 'package.json'))) return candidate;
  }
  throw new Error('fw: cannot find the fw package root (templates/ missing).');
}
