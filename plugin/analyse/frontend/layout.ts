import path from 'node:path';

/** Which kind of web app `web/` holds: a Vite single-page app, a Nuxt app, or none at all. */
export type WebLayout = 'none' | 'vite' | 'nuxt';

/** The bridge file of each layout, best first; `web/lib/fw.ts` is accepted for both. */
export const bridgeCandidates: Record<Exclude<WebLayout, 'none'>, readonly string[]> = {
  vite: ['web/src/lib/fw.ts', 'web/lib/fw.ts'],
  nuxt: ['web/composables/fw.ts', 'web/lib/fw.ts'],
};

export function detectLayout(files: readonly string[]): WebLayout {
  if (files.length === 0) return 'none';
  const nuxt = files.some((f) => /^web\/nuxt\.config\.[cm]?[jt]s$/.test(f) || f === 'web/app.vue' || (f.startsWith('web/pages/') && f.endsWith('.vue')));
  return nuxt ? 'nuxt' : 'vite';
}

/** What a web/ file is for, which decides the rules that apply to it. */
export type FileRole = 'bridge' | 'config' | 'server' | 'plugin' | 'page' | 'source';

export function fileRole(file: string, bridge: string | null): FileRole {
  if (file === bridge) return 'bridge';
  if (/^web\/[^/]+\.config\.[cm]?[jt]s$/.test(file)) return 'config';
  if (file.startsWith('web/server/')) return 'server';
  if (file.startsWith('web/plugins/')) return 'plugin';
  if (file.startsWith('web/pages/')) return 'page';
  return 'source';
}

/** Nuxt's fw plugins (`web/plugins/fw.client.ts`, `fw.server.ts`, `fw.ts`) and the context each runs in. */
export function nuxtPluginMode(file: string): 'client' | 'server' | 'universal' | undefined {
  const match = /^web\/plugins\/(?:\d+\.)?fw(?:\.(client|server))?\.[cm]?[jt]s$/.exec(file);
  if (!match) return undefined;
  return (match[1] as 'client' | 'server' | undefined) ?? 'universal';
}

/**
 * The route of a Nuxt page file: `web/pages/index.vue` → `/`, `web/pages/notes/[id].vue` →
 * `/notes/:id`, `[[slug]]` → `:slug?`, `[...slug]` → `:slug(.*)*`. Undefined for non-page files.
 */
export function nuxtPageRoute(file: string): string | undefined {
  if (!file.startsWith('web/pages/') || !/\.(?:vue|tsx|jsx)$/.test(file)) return undefined;
  const segments = file.slice('web/pages/'.length).replace(/\.(?:vue|tsx|jsx)$/, '').split('/');
  const parts = segments.flatMap((segment) => {
    if (segment === 'index') return [];
    return [segment.replace(/\[\.\.\.([^\]]+)\]/g, ':$1(.*)*').replace(/\[\[([^\]]+)\]\]/g, ':$1?').replace(/\[([^\]]+)\]/g, ':$1')];
  });
  return `/${parts.join('/')}`;
}

/**
 * Nuxt's auto-import name of a component file: `web/components/notes/List.vue` → `NotesList`
 * (directories prefix the name, repeated words are not doubled).
 */
export function nuxtComponentName(file: string): string | undefined {
  if (!file.startsWith('web/components/')) return undefined;
  const parts = file.slice('web/components/'.length).replace(/\.(?:vue|tsx|jsx|ts|js)$/, '').split('/').map(pascal);
  let name = '';
  for (const part of parts) name = part.startsWith(name) && name !== '' ? part : name + part;
  return name.replace(/Index$/, '') || undefined;
}

/** `note-list` → `NoteList`, `noteList` → `NoteList`. */
export function pascal(text: string): string {
  return text.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

/**
 * The import specifier of app-relative `target` from app-relative `file`: `./lib/fw.ts`, or
 * `../composables/fw` without `extension`.
 */
export function importSpecifier(file: string, target: string, extension: boolean): string {
  let relative = path.posix.relative(path.posix.dirname(file), target);
  if (!relative.startsWith('.')) relative = `./${relative}`;
  return extension ? relative : relative.replace(/\.[cm]?[jt]sx?$/, '');
}

const extensions = ['', '.ts', '.tsx', '.js', '.jsx', '.mts', '.mjs', '.vue', '/index.ts', '/index.tsx', '/index.js', '/index.jsx', '/index.vue'];

/**
 * Where an import points, app-relative (it may be outside web/, e.g. `src/commands/x.ts`), or
 * undefined for a package. `~/` and `@/` are Nuxt's and Vite's usual aliases of the web source root.
 */
export function resolveImport(from: string, source: string, files: ReadonlySet<string>): string | undefined {
  let bases: string[];
  if (source.startsWith('./') || source.startsWith('../')) bases = [path.posix.join(path.posix.dirname(from), source)];
  else if (source.startsWith('~/') || source.startsWith('@/')) bases = [`web/src/${source.slice(2)}`, `web/${source.slice(2)}`];
  else if (source.startsWith('~~/') || source.startsWith('@@/')) bases = [source.slice(3)];
  else return undefined;
  for (const base of bases) {
    for (const candidate of [base, ...extensions.map((ext) => base + ext), base.replace(/\.js$/, '.ts'), base.replace(/\.jsx?$/, '.tsx')]) {
      if (files.has(candidate)) return candidate;
    }
  }
  return bases[bases.length - 1];
}

let resolved: { files: ReadonlySet<string>; key: string; memo: WeakMap<object, string | null> } | undefined;
const fileSets = new WeakMap<readonly { file: string }[], ReadonlySet<string>>();

/** The set of files of one analysis pass, the same object for every caller of that pass (so lookups below hit). */
export function fileSetOf(facts: readonly { file: string }[]): ReadonlySet<string> {
  let set = fileSets.get(facts);
  if (set === undefined) fileSets.set(facts, (set = new Set(facts.map((f) => f.file))));
  return set;
}

/**
 * `resolveImport` of an import statement of file `from`, remembered per statement object for as long
 * as the set of files stays the same (one web/ edit rarely adds or removes a file, and the facts of
 * unchanged files keep their statement objects), so a pass over a large app resolves only new imports.
 */
export function resolveImportCached(from: string, statement: { source: string }, files: ReadonlySet<string>): string | undefined {
  if (resolved?.files !== files) {
    const key = [...files].join('\n');
    if (resolved?.key !== key) resolved = { files, key, memo: new WeakMap() };
    else resolved.files = files;
  }
  const known = resolved.memo.get(statement);
  if (known !== undefined) return known ?? undefined;
  const target = resolveImport(from, statement.source, files);
  resolved.memo.set(statement, target ?? null);
  return target;
}
