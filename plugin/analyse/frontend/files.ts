import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
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

/**
 * The sources of web/ held in memory: read in full once, then only the files reported changed — what a
 * watcher (the Vite plugin) gives the analysis, so one edit costs one read, not one per file.
 */
export interface WebSources {
  /** Every analysable file's source, by app-relative path. */
  read(): Promise<ReadonlyMap<string, string>>;
  /** Marks an app-relative file as changed, added or removed since the last read. */
  changed(file: string): void;
}

export function createWebSources(root: string): WebSources {
  let sources: Map<string, string> | undefined;
  const dirty = new Set<string>();
  const load = async (file: string) => readFile(path.join(root, file), 'utf8');
  return {
    async read() {
      if (sources === undefined) {
        dirty.clear();
        const files = await listWebFiles(root);
        sources = new Map(await Promise.all(files.map(async (file) => [file, await load(file)] as const)));
        return sources;
      }
      for (const file of dirty) {
        const text = existsSync(path.join(root, file)) ? await load(file).catch(() => undefined) : undefined;
        if (text === undefined) sources.delete(file);
        else sources.set(file, text);
      }
      dirty.clear();
      return sources;
    },
    changed(file) {
      dirty.add(file);
    },
  };
}
