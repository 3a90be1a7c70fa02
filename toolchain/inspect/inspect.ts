import path from 'node:path';
import type { EntryKind } from '../../runtime/core/entry-types.ts';
import { fwVersion } from '../../runtime/core/version.ts';
import { type AppModel, analyseApp } from '../../plugin/analyse/app-model.ts';
import { analyseFrontend } from '../../plugin/analyse/frontend/analyse.ts';
import type { FrontendGraph } from '../../plugin/analyse/frontend/graph.ts';
import { type AgentToolsJson, buildAgentTools } from '../../plugin/generate/agent-tools.ts';
import { buildCapabilityMap, type CapabilityMap } from '../../plugin/generate/capability-map.ts';
import { buildFrontendGraphJson, type FrontendGraphJson } from '../../plugin/generate/frontend-graph.ts';
import { loadAppOnce } from '../../plugin/load-app-once.ts';
import { nextCronTicks } from '../../runtime/schedule/cron-ticks.ts';

/** `fw inspect client`: the generated api surface and how the web app calls each entry. */
export interface ClientSurface {
  fwVersion: string;
  layout: FrontendGraph['layout'];
  bridge: string | null;
  entries: Array<{
    name: string;
    kind: EntryKind;
    /** How the web app reaches it: a liveQuery's is its subscription, `GET /live/<name>`. */
    route: string | null;
    /** A liveQuery's one-shot read (`POST /queries/<name>`), beside its subscription. */
    onceRoute?: string;
    policy: string;
    args: Record<string, unknown> | null;
    /** The React hook and Vue composable calls that reach it. */
    hooks: { react: string; vue: string };
  }>;
  /** The entries of external services (fw.manifest.json and imported manifests), reached through fw's bridge. */
  external: Array<{
    /** `<service>.<entry>` */
    name: string;
    kind: 'command' | 'query';
    route: string;
    policy: string;
    args: Record<string, unknown> | null;
    /** The manifest's resultSchema (the client's result type), or null: `unknown`. */
    result: Record<string, unknown> | null;
    hooks: { react: string; vue: string };
  }>;
}

export type InspectTarget = 'client' | 'frontend' | 'capabilities' | 'agent-tools' | 'crons';
export type Inspection = ClientSurface | FrontendGraphJson | CapabilityMap | AgentToolsJson | CronList;

/** `fw inspect crons`: the crons of `src/crons.ts` with their next run (by this machine's clock). */
export interface CronList {
  crons: ReturnType<typeof nextCronTicks>;
}

const callables = {
  command: { react: 'useCommand', vue: 'useFwCommand', section: 'commands' },
  query: { react: 'useQuery', vue: 'useFwQuery', section: 'queries' },
  liveQuery: { react: 'useLiveQuery', vue: 'useFwLiveQuery', section: 'liveQueries' },
} as const;

/**
 * Loads and analyses the app (writing nothing) and returns one view of it.
 *
 * @example
 *   const caps = await inspectApp({ root: '.', target: 'capabilities' }) as CapabilityMap;
 *   caps.ui.entriesWithoutUi // ['listNotes']
 */
export async function inspectApp(options: { root: string; target: InspectTarget }): Promise<Inspection> {
  const root = path.resolve(options.root);
  const app = await loadAppOnce(root);
  if (options.target === 'crons') return { crons: nextCronTicks(app, Date.now()) };
  const model = await analyseApp(root, app);
  if (options.target === 'agent-tools') return buildAgentTools(model);
  const frontend = await analyseFrontend(root, model.entries);
  switch (options.target) {
    case 'client':
      return clientSurface(model, frontend);
    case 'frontend':
      return buildFrontendGraphJson(frontend);
    case 'capabilities':
      return buildCapabilityMap(model, frontend);
  }
}

function clientSurface(model: AppModel, frontend: FrontendGraph): ClientSurface {
  return {
    fwVersion,
    layout: frontend.layout,
    bridge: frontend.bridge.file,
    entries: model.entries.flatMap((entry) => {
      if (entry.kind !== 'command' && entry.kind !== 'query' && entry.kind !== 'liveQuery') return [];
      const names = callables[entry.kind];
      const args = entry.kind === 'command' ? '' : ', args';
      return [{
        name: entry.name,
        kind: entry.kind,
        ...(entry.kind === 'liveQuery' ? { route: `GET /live/${entry.name}`, ...(entry.route ? { onceRoute: entry.route } : {}) } : { route: entry.route }),
        policy: entry.policy,
        args: entry.args.kind === 'json-schema' ? entry.args.schema : null,
        hooks: { react: `${names.react}('${entry.name}'${args})`, vue: `${names.vue}(api.${names.section}.${entry.name}${args})` },
      }];
    }),
    external: model.external.flatMap((service) =>
      service.entries.map((entry) => {
        const hook = entry.kind === 'command' ? { react: 'useExternalCommand', vue: 'useFwExternalCommand', args: '' } : { react: 'useExternalQuery', vue: 'useFwExternalQuery', args: ', args' };
        return {
          name: entry.qualifiedName,
          kind: entry.kind,
          route: entry.route,
          policy: entry.policy,
          args: entry.args,
          result: entry.result,
          hooks: { react: `${hook.react}('${entry.qualifiedName}'${hook.args})`, vue: `${hook.vue}('${entry.qualifiedName}'${hook.args})` },
        };
      }),
    ),
  };
}
