import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';

const skippedDirs = new Set(['node_modules', '.nuxt', '.output', 'dist', '.vite', '.git', 'public', 'coverage', '.cache']);
const sourceFile = /\.(?:ts|tsx|js|jsx|mts|mjs|vue)$/;
const ignoredFile = /(?:\.d\.ts|\.(?:test|spec)\.[cm]?[jt]sx?)$/;

/**
 * The analysable files of an app's `web/` (app-relative, `/`-separated, sorted): scripts and `.vue`
 * files, without dependencies, build output, declaration files and tests. Empty when there is no web/.
 */
export async function listWebFiles(root: string): Promise<string[]> {
  const web = path.join(root, 'web');
  if (!existsSync(web)) return [];
  const found: string[] = [];
  const visit = async (dir: string) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!skippedDirs.has(entry.name) && !entry.name.startsWith('.')) await visit(path.join(dir, entry.name));
      } else if (entry.isFile() && isWebSource(entry.name)) {
        found.push(path.relative(root, path.join(dir, entry.name)).split(path.sep).join('/'));
      }
    }
  };
  await visit(web);
  return found.sort();
}

/** Whether a file name is one the frontend analysis reads. */
export function isWebSource(name: string): boolean {
  return sourceFile.test(name) && !ignoredFile.test(name);
}

/** Whether an absolute path is an analysable file under the app's web/ (for watchers). */
export function isWebFile(root: string, file: string): boolean {
  const rel = path.relative(path.join(root, 'web'), file).split(path.sep);
  if (rel[0] === '..' || path.isAbsolute(rel.join('/'))) return false;
  return rel.slice(0, -1).every((dir) => !skippedDirs.has(dir) && !dir.startsWith('.')) && isWebSource(rel.at(-1)!);
}
