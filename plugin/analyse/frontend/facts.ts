import type { SourcePosition } from '../table-access.ts';

/**
 * What one web/ file says, from its syntax tree alone (no other file is read): the per-file unit the
 * analysis caches by content hash. The graph (graph.ts) links facts of all files with the backend.
 */
export interface FileFacts {
  /** App-relative, `/`-separated: `web/src/App.tsx`. */
  file: string;
  /** sha256 of the file's content. */
  hash: string;
  errors: Array<{ message: string; at: SourcePosition }>;
  imports: ImportFact[];
  /** The component a default export names (`export default function Notes`), null when none. */
  defaultExport: string | null;
  /** Components declared in the file (a `.vue` file is one component, named after the file). */
  components: Array<{ name: string; at: SourcePosition }>;
  /** Component elements rendered (`<NoteList />`), by the component rendering them (null: module top level). */
  renders: Array<{ from: string | null; tag: string; at: SourcePosition }>;
  hooks: HookFact[];
  /** Calls of `mutate`/`mutateAsync` of a command hook's result: the UI actions. */
  actions: ActionFact[];
  providers: Array<{ kind: 'FwProvider'; props: string[]; at: SourcePosition }>;
  routes: RouteFact[];
  fetches: Array<{ api: string; url: string; at: SourcePosition }>;
  agentRuns: Array<{ call: string; at: SourcePosition }>;
}

export interface ImportFact {
  source: string;
  /** Every binding is type-only (`import type …`): erased at build time. */
  typeOnly: boolean;
  /** `imported` is the exported name, `default` or `*`. */
  names: Array<{ imported: string; local: string }>;
  at: SourcePosition;
}

/** How a hook names its entry: `'createNote'`, `api.commands.createNote`, or something computed. */
export type EntryTarget =
  | { kind: 'name'; name: string }
  | { kind: 'ref'; section: ApiSection; name: string }
  | { kind: 'dynamic' };

export type ApiSection = 'commands' | 'queries' | 'liveQueries';

export interface HookFact {
  /** The hook's name as exported: `useCommand`, `useFwLiveQuery`, … */
  hook: HookName;
  target: EntryTarget;
  component: string | null;
  at: SourcePosition;
}

export interface ActionFact {
  /** Index into the file's `hooks`. */
  hook: number;
  method: 'mutate' | 'mutateAsync';
  /** The named function the call sits in (`addNote`), null for an inline handler. */
  handler: string | null;
  /** The UI event that runs it (`onSubmit`, `submit`, `onClick`), null when not found in this file. */
  event: string | null;
  /** The element carrying that event (`form`, `button`). */
  element: string | null;
  component: string | null;
  at: SourcePosition;
}

export interface RouteFact {
  /** The full path, nested paths joined (`/notes/:id`). */
  path: string;
  /** Component names the route renders, as written in this file. */
  components: string[];
  source: 'react-router' | 'tanstack-router';
  at: SourcePosition;
}

/** Hooks and composables of fw's client bindings, with the entry kinds each accepts. */
export const hookKinds = {
  useCommand: ['command'],
  useQuery: ['query', 'liveQuery'],
  useLiveQuery: ['liveQuery'],
  usePaginatedLiveQuery: ['liveQuery'],
  useFwCommand: ['command'],
  useFwQuery: ['query', 'liveQuery'],
  useFwLiveQuery: ['liveQuery'],
  useFwPaginatedLiveQuery: ['liveQuery'],
} as const;

export type HookName = keyof typeof hookKinds;

export const commandHooks: ReadonlySet<HookName> = new Set(['useCommand', 'useFwCommand']);

/** The entry kind each `api.<section>` holds. */
export const sectionKinds = { commands: 'command', queries: 'query', liveQueries: 'liveQuery' } as const;
