import type { EntryKind } from '../../runtime/core/entry-types.ts';
import { fwVersion } from '../../runtime/core/version.ts';
import type { AppModel } from '../analyse/app-model.ts';
import type { Unresolved } from '../analyse/entry-access.ts';
import type { FrontendGraph } from '../analyse/frontend/graph.ts';

type Analysis = { analysis: 'complete' } | { analysis: 'partial'; unresolved: Unresolved[] };

/**
 * `src/fw/_generated/capabilityMap.json`: which tables each entry reads and writes under which
 * policy, and the same by table. `analysis: "partial"` marks lists the static analysis could not
 * complete, with the places it could not follow.
 */
export interface CapabilityMap {
  fwVersion: string;
  entries: Array<{ name: string; kind: EntryKind; file: string; policy: string; reads: string[]; writes: string[] } & Analysis>;
  /** The schema's tables, with the entries seen reading and writing each. */
  tables: Array<{ name: string; tenantScoped: boolean; readBy: string[]; writtenBy: string[] }>;
  /** The UI side: how the frontend reaches each entry (see `CapabilityUi`). */
  ui: CapabilityUi;
  /**
   * External entries: the service and transport behind each, its policy, risk and the tables its
   * effects invalidate — named tables, plus the declared `reads` of named liveQueries (every table
   * when a named liveQuery declares none; see docs/external.md → Effects).
   */
  external: Array<{ qualifiedName: string; kind: 'command' | 'query'; transport: string; policy: string; risk: string; needsApproval: boolean; effects: string[]; invalidates: string[] }>;
}

/**
 * UI action → component → route → hook → entry → tables → policy. One path per UI action (a command
 * hook's `mutate` in a handler or form), plus one per hook call no action uses (a query or live list,
 * or a command hook whose calls were not found). Answers: which route uses an entry (`routes` of its
 * paths), which component subscribes to a liveQuery (`component` where `kind` is `liveQuery`), which
 * entries have no UI path (`entriesWithoutUi`), which UI action points to a missing entry (`status`
 * not `ok` with an `action`), and which policy protects the entry behind a UI action (`policy`).
 */
export interface CapabilityUi {
  paths: Array<{
    action: { id: string; handler: string | null; event: string | null; element: string | null; method: 'mutate' | 'mutateAsync' } | null;
    component: string | null;
    routes: string[];
    hook: { id: string; name: string };
    entry: string | null;
    /** The entry's kind; null when it does not exist. */
    kind: EntryKind | null;
    status: FrontendGraph['hooks'][number]['status'];
    reads: string[];
    writes: string[];
    policy: string | null;
  }>;
  /** Commands, queries and liveQueries no hook call reaches (system entries excluded). */
  entriesWithoutUi: string[];
}

/**
 * Builds capabilityMap.json from the analysed app.
 *
 * @example
 *   buildCapabilityMap(model).tables
 *   // [{ name: 'notes', tenantScoped: true, readBy: ['listNotes', 'liveNotes'], writtenBy: ['createNote'] }]
 */
export function buildCapabilityMap(model: AppModel, frontend: FrontendGraph): CapabilityMap {
  return {
    fwVersion,
    entries: model.entries.map(({ name, kind, file, policy, access }) => ({
      name,
      kind,
      file,
      policy,
      reads: access.reads,
      writes: access.writes,
      ...(access.kind === 'complete' ? { analysis: 'complete' as const } : { analysis: 'partial' as const, unresolved: access.unresolved }),
    })),
    tables: model.tables.map(({ name, table }) => ({
      name,
      tenantScoped: table.tenantScoped,
      readBy: model.entries.filter((e) => e.access.reads.includes(name)).map((e) => e.name),
      writtenBy: model.entries.filter((e) => e.access.writes.includes(name)).map((e) => e.name),
    })),
    ui: buildCapabilityUi(model, frontend),
    external: model.external.flatMap((service) =>
      service.entries.map((e) => ({
        qualifiedName: e.qualifiedName,
        kind: e.kind,
        transport: service.transport,
        policy: e.policy,
        risk: e.risk,
        needsApproval: e.needsApproval,
        effects: e.effects.map((x) => x.name),
        invalidates: e.invalidates,
      })),
    ),
  };
}

function buildCapabilityUi(model: AppModel, frontend: FrontendGraph): CapabilityUi {
  const paths: CapabilityUi['paths'] = [];
  const entries = new Map(model.entries.map((e) => [e.name, e]));
  const actionsOf = new Map<string, FrontendGraph['actions']>();
  for (const a of frontend.actions) {
    const list = actionsOf.get(a.hook);
    if (list) list.push(a);
    else actionsOf.set(a.hook, [a]);
  }
  for (const hook of frontend.hooks) {
    const entry = hook.entry === null ? undefined : entries.get(hook.entry);
    const backend = {
      hook: { id: hook.id, name: hook.hook },
      entry: hook.entry,
      kind: entry?.kind ?? null,
      status: hook.status,
      reads: entry?.access.reads ?? [],
      writes: entry?.access.writes ?? [],
      policy: entry?.policy ?? null,
    };
    const actions = actionsOf.get(hook.id) ?? [];
    if (actions.length === 0) paths.push({ action: null, component: hook.component, routes: hook.routes, ...backend });
    for (const a of actions) {
      paths.push({
        action: { id: a.id, handler: a.handler, event: a.event, element: a.element, method: a.method },
        component: a.component,
        routes: a.routes,
        ...backend,
      });
    }
  }
  const withoutUi = frontend.layout === 'none' ? [] : frontend.entries.filter((e) => e.hooks.length === 0).map((e) => e.name);
  return {
    paths,
    entriesWithoutUi: withoutUi.filter((name) => entries.get(name)?.policy !== 'system'),
  };
}
