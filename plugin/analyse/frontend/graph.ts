import type { EntryKind } from '../../../runtime/entries.ts';
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

/** Links the facts of every web/ file (sorted by file) with the backend entries. Diagnostics are left empty here. */
export function buildGraph(facts: readonly FileFacts[], entries: readonly GraphEntry[]): FrontendGraph {
  const files = facts.map((f) => f.file);
  const fileSet = fileSetOf(facts);
  const layout = detectLayout(files);
  const expected = layout === 'none' ? [] : [...bridgeCandidates[layout]];
  const bridge = expected.find((f) => fileSet.has(f)) ?? null;
  const byFile = new Map(facts.map((f) => [f.file, f]));
  const loc = (file: string, at: SourcePosition): Located => ({ file, line: at.line, column: at.column });

  // Components, and the component a tag names in a file.
  const componentIds = new Set(facts.flatMap((f) => f.components.map((c) => `${f.file}#${c.name}`)));
  const nuxtComponents = new Map<string, string>();
  for (const f of facts) {
    const name = nuxtComponentName(f.file);
    if (name !== undefined && f.defaultExport !== null) nuxtComponents.set(name, `${f.file}#${f.defaultExport}`);
  }
  const componentOf = (file: string, tag: string): string | undefined => {
    const own = byFile.get(file)!;
    const [head, ...rest] = tag.split('.');
    if (rest.length > 0) return undefined;
    for (const statement of own.imports) {
      const binding = statement.names.find((n) => n.local === head);
      if (!binding) continue;
      const target = resolveImportCached(file, statement, fileSet);
      const facts = target === undefined ? undefined : byFile.get(target);
      if (facts === undefined) return undefined;
      const name = binding.imported === 'default' ? facts.defaultExport : binding.imported;
      const id = `${facts.file}#${name}`;
      return componentIds.has(id) ? id : undefined;
    }
    if (componentIds.has(`${file}#${tag}`)) return `${file}#${tag}`;
    return nuxtComponents.get(pascal(tag));
  };

  const renders = new Map<string, Set<string>>();
  const topLevel: Array<{ file: string; at: SourcePosition; component: string }> = [];
  for (const f of facts) {
    for (const r of f.renders) {
      const target = componentOf(f.file, r.tag);
      if (target === undefined) continue;
      if (r.from === null) topLevel.push({ file: f.file, at: r.at, component: target });
      else add(renders, `${f.file}#${r.from}`, target);
    }
  }

  // Routes: router definitions, Nuxt pages, else the app's root render.
  const routes: FrontendGraph['routes'] = [];
  for (const f of facts) {
    for (const r of f.routes) {
      const components = r.components.map((c) => componentOf(f.file, c)).filter((c): c is string => c !== undefined);
      routes.push({ ...loc(f.file, r.at), path: r.path, source: r.source, components: unique(components) });
    }
    const page = layout === 'nuxt' ? nuxtPageRoute(f.file) : undefined;
    if (page !== undefined && f.defaultExport !== null) routes.push({ ...loc(f.file, { line: 1, column: 1 }), path: page, source: 'nuxt-pages', components: [`${f.file}#${f.defaultExport}`] });
  }
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

  const entryByName = new Map(entries.map((e) => [e.name, e]));
  const hooks: FrontendGraph['hooks'] = [];
  const actions: FrontendGraph['actions'] = [];
  for (const f of facts) {
    const hookIds = f.hooks.map((h) => `${f.file}:${h.at.line}:${h.at.column}`);
    f.hooks.forEach((h, i) => {
      const entryName = h.target.kind === 'dynamic' ? null : h.target.name;
      const entry = entryName === null ? undefined : entryByName.get(entryName);
      const accepted: readonly EntryKind[] = hookKinds[h.hook];
      const section = h.target.kind === 'ref' ? sectionKinds[h.target.section] : undefined;
      const expects = section === undefined ? [...accepted] : accepted.filter((k) => k === section);
      const status = entryName === null ? 'dynamic' : entry === undefined ? 'missing_entry' : expects.includes(entry.kind) ? 'ok' : 'wrong_kind';
      const component = h.component === null ? null : `${f.file}#${h.component}`;
      hooks.push({ ...loc(f.file, h.at), id: hookIds[i]!, hook: h.hook, entry: entryName, expects, entryKind: entry?.kind ?? null, status, component, routes: routeList(component) });
    });
    for (const a of f.actions) {
      const hook = f.hooks[a.hook]!;
      const component = a.component === null ? null : `${f.file}#${a.component}`;
      actions.push({
        ...loc(f.file, a.at), id: `${f.file}:${a.at.line}:${a.at.column}`, hook: hookIds[a.hook]!, entry: hook.target.kind === 'dynamic' ? null : hook.target.name,
        method: a.method, handler: a.handler, event: a.event, element: a.element, component, routes: routeList(component),
      });
    }
  }

  // Sorted first: the per-entry lists below keep this order. Indexed, since entries × hooks would be
  // quadratic on a large app.
  hooks.sort(byPlace);
  actions.sort(byPlace);
  const hooksByEntry = new Map<string, FrontendGraph['hooks']>();
  for (const h of hooks) if (h.status === 'ok') push(hooksByEntry, h.entry!, h);
  const okHookEntry = new Map(hooks.filter((h) => h.status === 'ok').map((h) => [h.id, h.entry!]));
  const actionsByEntry = new Map<string, string[]>();
  for (const a of actions) {
    const entry = okHookEntry.get(a.hook);
    if (entry !== undefined) push(actionsByEntry, entry, a.id);
  }

  const providers: FrontendGraph['providers'] = [];
  for (const f of facts) {
    for (const p of f.providers) providers.push({ ...loc(f.file, p.at), kind: p.kind, props: p.props, mode: null });
    const mode = layout === 'nuxt' ? nuxtPluginMode(f.file) : undefined;
    if (mode !== undefined) providers.push({ ...loc(f.file, { line: 1, column: 1 }), kind: 'nuxt-plugin', props: [], mode });
  }

  return {
    layout,
    bridge: { file: bridge, expected },
    files: facts.map((f) => ({ file: f.file, role: fileRole(f.file, bridge), parsed: f.errors.length === 0 })),
    routes: routes.sort((a, b) => compare(a.path, b.path) || byPlace(a, b)),
    components: facts
      .flatMap((f) => f.components.map((c) => {
        const id = `${f.file}#${c.name}`;
        return { ...loc(f.file, c.at), id, name: c.name, routes: routeList(id), renders: sorted(renders.get(id) ?? []) };
      }))
      .sort((a, b) => compare(a.id, b.id)),
    bridgeImports: bridge === null ? [] : facts.flatMap((f) => f.imports
      .filter((i) => resolveImportCached(f.file, i, fileSet) === bridge)
      .map((i) => ({ ...loc(f.file, i.at), names: i.names.map((n) => n.imported).sort() }))),
    hooks,
    actions,
    providers,
    rawFetches: facts.flatMap((f) => f.fetches.map((x) => ({ ...loc(f.file, x.at), api: x.api, url: x.url }))),
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
