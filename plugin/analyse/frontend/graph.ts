import type { EntryKind } from '../../../runtime/core/entry-types.ts';
import type { CheckDiagnostic } from '../check-diagnostic.ts';
import type { SourcePosition } from '../table-access.ts';
import { type FileFacts, type HookName, hookKinds, sectionKinds } from './facts.ts';
import { bridgeCandidates, detectLayout, type FileRole, fileRole, nuxtComponentName, nuxtPageRoute, nuxtPluginMode, fileSetOf, pascal, resolveImportCached, type WebLayout } from './layout.ts';

type Located = { file: string; line: number; column: number };

/**
 * The app's frontend as fw understands it (`frontendGraph.json`): files, routes, components and the
 * routes that render them, bridge imports, hook calls and the entries they name, UI actions, provider
 * setup, raw runtime fetches and the diagnostics. Ids: a component is `file#Name`, a hook call or an
 * action `file:line:column`. Every list is sorted.
 */
export interface FrontendGraph {
  layout: WebLayout;
  bridge: { file: string | null; expected: string[] };
  files: Array<{ file: string; role: FileRole; parsed: boolean }>;
  routes: Array<Located & { path: string; source: 'react-router' | 'tanstack-router' | 'nuxt-pages' | 'root'; components: string[] }>;
  components: Array<Located & { id: string; name: string; routes: string[]; renders: string[] }>;
  bridgeImports: Array<Located & { names: string[] }>;
  hooks: Array<Located & {
    id: string;
    hook: HookName;
    /** The entry it names; null when computed at run time. */
    entry: string | null;
    /** Kinds the hook accepts (narrowed by `api.<section>` when it names a ref). */
    expects: EntryKind[];
    /** The named entry's actual kind; null when there is no such entry. */
    entryKind: EntryKind | null;
    status: 'ok' | 'missing_entry' | 'wrong_kind' | 'dynamic';
    component: string | null;
    routes: string[];
  }>;
  actions: Array<Located & {
    id: string;
    hook: string;
    entry: string | null;
    method: 'mutate' | 'mutateAsync';
    handler: string | null;
    event: string | null;
    element: string | null;
    component: string | null;
    routes: string[];
  }>;
  providers: Array<Located & { kind: 'FwProvider' | 'nuxt-plugin'; props: string[]; mode: 'client' | 'server' | 'universal' | null }>;
  rawFetches: Array<Located & { api: string; url: string }>;
  /** Each command, query and liveQuery with the UI that reaches it. */
  entries: Array<{ name: string; kind: EntryKind; hooks: string[]; actions: string[]; components: string[]; routes: string[] }>;
  diagnostics: CheckDiagnostic[];
}

/** The backend entries the graph links to. */
export interface GraphEntry {
  name: string;
  kind: EntryKind;
  policy: string;
  /** Its source file, app-relative. */
  file: string;
}

const uiKinds: ReadonlySet<EntryKind> = new Set(['command', 'query', 'liveQuery']);

/** What one file contributes to the graph before routes are known: its facts resolved against the other files and the entries. */
interface LinkedFile {
  renders: Array<{ from: string | null; at: SourcePosition; target: string }>;
  routes: FrontendGraph['routes'];
  hooks: Array<Omit<FrontendGraph['hooks'][number], 'routes'>>;
  actions: Array<Omit<FrontendGraph['actions'][number], 'routes'>>;
  components: Array<Located & { id: string; name: string }>;
  providers: FrontendGraph['providers'];
  bridgeImports: FrontendGraph['bridgeImports'];
  rawFetches: FrontendGraph['rawFetches'];
  file: FrontendGraph['files'][number];
}

/**
 * Everything a file's linking reads besides its own facts: the files and the components each declares
 * or exports (for resolving rendered tags), and the entries. Equal contexts are the same object, so a
 * file whose facts and context did not change keeps its linked part from the last build: after an edit,
 * only the edited file is linked again unless it changed what components it offers.
 */
interface LinkContext {
  surface: string;
  entries: readonly GraphEntry[];
}

let lastContext: LinkContext | undefined;
const surfaces = new WeakMap<FileFacts, string>();
const linkedFiles = new WeakMap<FileFacts, { context: LinkContext; linked: LinkedFile }>();

function linkContext(facts: readonly FileFacts[], entries: readonly GraphEntry[]): LinkContext {
  const surface = facts.map((f) => {
    let own = surfaces.get(f);
    if (own === undefined) surfaces.set(f, (own = `${f.file}\u0001${f.defaultExport ?? ''}\u0001${f.components.map((c) => c.name).join(',')}`));
    return own;
  }).join('\u0002');
  if (lastContext?.entries !== entries || lastContext.surface !== surface) lastContext = { surface, entries };
  return lastContext;
}

/** Links the facts of every web/ file (sorted by file) with the backend entries. Diagnostics are left empty here. */
export function buildGraph(facts: readonly FileFacts[], entries: readonly GraphEntry[]): FrontendGraph {
  const files = facts.map((f) => f.file);
  const fileSet = fileSetOf(facts);
  const layout = detectLayout(files);
  const expected = layout === 'none' ? [] : [...bridgeCandidates[layout]];
  const bridge = expected.find((f) => fileSet.has(f)) ?? null;
  const byFile = new Map(facts.map((f) => [f.file, f]));
  const loc = (file: string, at: SourcePosition): Located => ({ file, line: at.line, column: at.column });

  // Components, and the component a tag names in a file (built only when some file needs linking).
  let componentOf: ((file: string, tag: string) => string | undefined) | undefined;
  const resolveComponent = (file: string, tag: string): string | undefined => {
    if (componentOf === undefined) {
      const componentIds = new Set(facts.flatMap((f) => f.components.map((c) => `${f.file}#${c.name}`)));
      const nuxtComponents = new Map<string, string>();
      for (const f of facts) {
        const name = nuxtComponentName(f.file);
        if (name !== undefined && f.defaultExport !== null) nuxtComponents.set(name, `${f.file}#${f.defaultExport}`);
      }
      componentOf = (from, name) => {
        const own = byFile.get(from)!;
        const [head, ...rest] = name.split('.');
        if (rest.length > 0) return undefined;
        for (const statement of own.imports) {
          const binding = statement.names.find((n) => n.local === head);
          if (!binding) continue;
          const target = resolveImportCached(from, statement, fileSet);
          const targetFacts = target === undefined ? undefined : byFile.get(target);
          if (targetFacts === undefined) return undefined;
          const exported = binding.imported === 'default' ? targetFacts.defaultExport : binding.imported;
          const id = `${targetFacts.file}#${exported}`;
          return componentIds.has(id) ? id : undefined;
        }
        if (componentIds.has(`${from}#${name}`)) return `${from}#${name}`;
        return nuxtComponents.get(pascal(name));
      };
    }
    return componentOf(file, tag);
  };

  const entryByName = new Map(entries.map((e) => [e.name, e]));
  const linkFile = (f: FileFacts): LinkedFile => {
    const renders: LinkedFile['renders'] = [];
    for (const r of f.renders) {
      const target = resolveComponent(f.file, r.tag);
      if (target !== undefined) renders.push({ from: r.from, at: r.at, target });
    }
    const routes: LinkedFile['routes'] = f.routes.map((r) => {
      const components = r.components.map((c) => resolveComponent(f.file, c)).filter((c): c is string => c !== undefined);
      return { ...loc(f.file, r.at), path: r.path, source: r.source, components: unique(components) };
    });
    const page = layout === 'nuxt' ? nuxtPageRoute(f.file) : undefined;
    if (page !== undefined && f.defaultExport !== null) routes.push({ ...loc(f.file, { line: 1, column: 1 }), path: page, source: 'nuxt-pages', components: [`${f.file}#${f.defaultExport}`] });

    const hookIds = f.hooks.map((h) => `${f.file}:${h.at.line}:${h.at.column}`);
    const hooks: LinkedFile['hooks'] = f.hooks.map((h, i) => {
      const entryName = h.target.kind === 'dynamic' ? null : h.target.name;
      const entry = entryName === null ? undefined : entryByName.get(entryName);
      const accepted: readonly EntryKind[] = hookKinds[h.hook];
      const section = h.target.kind === 'ref' ? sectionKinds[h.target.section] : undefined;
      const expects = section === undefined ? [...accepted] : accepted.filter((k) => k === section);
      const status = entryName === null ? 'dynamic' : entry === undefined ? 'missing_entry' : expects.includes(entry.kind) ? 'ok' : 'wrong_kind';
      const component = h.component === null ? null : `${f.file}#${h.component}`;
      return { ...loc(f.file, h.at), id: hookIds[i]!, hook: h.hook, entry: entryName, expects, entryKind: entry?.kind ?? null, status, component };
    });
    const actions: LinkedFile['actions'] = f.actions.map((a) => {
      const hook = f.hooks[a.hook]!;
      const component = a.component === null ? null : `${f.file}#${a.component}`;
      return {
        ...loc(f.file, a.at), id: `${f.file}:${a.at.line}:${a.at.column}`, hook: hookIds[a.hook]!, entry: hook.target.kind === 'dynamic' ? null : hook.target.name,
        method: a.method, handler: a.handler, event: a.event, element: a.element, component,
      };
    });
    const providers: LinkedFile['providers'] = f.providers.map((p) => ({ ...loc(f.file, p.at), kind: p.kind, props: p.props, mode: null }));
    const mode = layout === 'nuxt' ? nuxtPluginMode(f.file) : undefined;
    if (mode !== undefined) providers.push({ ...loc(f.file, { line: 1, column: 1 }), kind: 'nuxt-plugin', props: [], mode });
    return {
      renders,
      routes,
      hooks,
      actions,
      components: f.components.map((c) => ({ ...loc(f.file, c.at), id: `${f.file}#${c.name}`, name: c.name })),
      providers,
      bridgeImports: bridge === null ? [] : f.imports
        .filter((i) => resolveImportCached(f.file, i, fileSet) === bridge)
        .map((i) => ({ ...loc(f.file, i.at), names: i.names.map((n) => n.imported).sort() })),
      rawFetches: f.fetches.map((x) => ({ ...loc(f.file, x.at), api: x.api, url: x.url })),
      file: { file: f.file, role: fileRole(f.file, bridge), parsed: f.errors.length === 0 },
    };
  };
  const context = linkContext(facts, entries);
  const parts = facts.map((f) => {
    const known = linkedFiles.get(f);
    if (known?.context === context) return known.linked;
    const linked = linkFile(f);
    linkedFiles.set(f, { context, linked });
    return linked;
  });

  const renders = new Map<string, Set<string>>();
  const topLevel: Array<{ file: string; at: SourcePosition; component: string }> = [];
  parts.forEach((part, i) => {
    for (const r of part.renders) {
      if (r.from === null) topLevel.push({ file: facts[i]!.file, at: r.at, component: r.target });
      else add(renders, `${facts[i]!.file}#${r.from}`, r.target);
    }
  });

  // Routes: router definitions, Nuxt pages, else the app's root render.
  const routes: FrontendGraph['routes'] = parts.flatMap((part) => part.routes);
  if (routes.length === 0) {
    const roots = layout === 'nuxt' && byFile.has('web/app.vue') ? [{ file: 'web/app.vue', at: { line: 1, column: 1 }, component: 'web/app.vue#App' }] : topLevel;
    if (roots.length > 0) routes.push({ ...loc(roots[0]!.file, roots[0]!.at), path: '/', source: 'root', components: unique(roots.map((r) => r.component)) });
  }

  // Which routes render each component, following renders transitively.
  const routesOf = new Map<string, Set<string>>();
  for (const route of routes) {
    const queue = [...route.components];
    const seen = new Set(queue);
    while (queue.length > 0) {
      const id = queue.shift()!;
      add(routesOf, id, route.path);
      for (const next of renders.get(id) ?? []) if (!seen.has(next)) (seen.add(next), queue.push(next));
    }
  }
  const routeLists = new Map<string, string[]>();
  const routeList = (component: string | null): string[] => {
    if (component === null) return [];
    let list = routeLists.get(component);
    if (list === undefined) routeLists.set(component, (list = sorted(routesOf.get(component) ?? [])));
    return list;
  };

  // Files are sorted and each file's hooks and actions are in source order: already by place.
  const hooks: FrontendGraph['hooks'] = parts.flatMap((part) => part.hooks.map((h) => ({ ...h, routes: routeList(h.component) })));
  const actions: FrontendGraph['actions'] = parts.flatMap((part) => part.actions.map((a) => ({ ...a, routes: routeList(a.component) })));
  hooks.sort(byPlace);
  actions.sort(byPlace);
  // Indexed, since entries × hooks would be quadratic on a large app.
  const hooksByEntry = new Map<string, FrontendGraph['hooks']>();
  for (const h of hooks) if (h.status === 'ok') push(hooksByEntry, h.entry!, h);
  const okHookEntry = new Map(hooks.filter((h) => h.status === 'ok').map((h) => [h.id, h.entry!]));
  const actionsByEntry = new Map<string, string[]>();
  for (const a of actions) {
    const entry = okHookEntry.get(a.hook);
    if (entry !== undefined) push(actionsByEntry, entry, a.id);
  }

  return {
    layout,
    bridge: { file: bridge, expected },
    files: parts.map((part) => part.file),
    routes: routes.sort((a, b) => compare(a.path, b.path) || byPlace(a, b)),
    components: parts
      .flatMap((part) => part.components.map((c) => ({ ...c, routes: routeList(c.id), renders: sorted(renders.get(c.id) ?? []) })))
      .sort((a, b) => compare(a.id, b.id)),
    bridgeImports: parts.flatMap((part) => part.bridgeImports),
    hooks,
    actions,
    providers: parts.flatMap((part) => part.providers),
    rawFetches: parts.flatMap((part) => part.rawFetches),
    entries: entries.filter((e) => uiKinds.has(e.kind)).map((e) => {
      const using = hooksByEntry.get(e.name) ?? [];
      return {
        name: e.name,
        kind: e.kind,
        hooks: using.map((h) => h.id),
        actions: actionsByEntry.get(e.name) ?? [],
        components: unique(using.flatMap((h) => (h.component === null ? [] : [h.component]))),
        routes: unique(using.flatMap((h) => h.routes)),
      };
    }),
    diagnostics: [],
  };
}

function add(map: Map<string, Set<string>>, key: string, value: string): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function sorted(values: Iterable<string>): string[] {
  return [...values].sort();
}

function unique(values: readonly string[]): string[] {
  return sorted(new Set(values));
}

/** Code-unit order, as `[…].sort()` sorts strings (never locale order: artifacts must not depend on the machine). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** By file, then line, then column. */
function byPlace(a: Located, b: Located): number {
  return compare(a.file, b.file) || a.line - b.line || a.column - b.column;
}
