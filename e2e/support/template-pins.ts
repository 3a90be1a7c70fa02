import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from './app.ts';

type Lock = { packages: Record<string, { version?: string }> };
const readLock = async (dir: string): Promise<Lock> => JSON.parse(await readFile(path.join(dir, 'package-lock.json'), 'utf8'));

/**
 * What an installed app has that its template's lock does not pin, as `location@version`: empty when
 * the install took the pinned tree (toolchain/create/template-lock.ts). fwjs is the app's own choice
 * (a linked checkout, whose folder the lock lists outside node_modules/, or a tarball) and is left out.
 */
export async function unpinnedPackages(template: string, appDir: string): Promise<string[]> {
  const pinned = (await readLock(path.join(repoRoot, 'templates', template))).packages;
  const installed = (await readLock(appDir)).packages;
  return Object.entries(installed)
    .filter(([location]) => location.startsWith('node_modules/') && !/^node_modules\/fwjs(\/|$)/.test(location))
    .filter(([location, entry]) => pinned[location]?.version !== entry.version)
    .map(([location, entry]) => `${location}@${entry.version}`);
}
