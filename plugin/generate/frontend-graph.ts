import { fwVersion } from '../../runtime/core/version.ts';
import type { FrontendGraph } from '../analyse/frontend/graph.ts';

/** `src/fw/_generated/frontendGraph.json`: the analysed frontend (see FrontendGraph) under the fw version. */
export type FrontendGraphJson = { fwVersion: string } & FrontendGraph;

/**
 * Builds frontendGraph.json. An app without web/ gets layout `none` and empty lists.
 *
 * @example
 *   buildFrontendGraphJson(graph).hooks[0]
 *   // { file: 'web/src/App.tsx', line: 6, column: 17, id: 'web/src/App.tsx:6:17', hook: 'useLiveQuery', entry: 'liveNotes', … }
 */
export function buildFrontendGraphJson(graph: FrontendGraph): FrontendGraphJson {
  return { fwVersion, ...graph };
}
