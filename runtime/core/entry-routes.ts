import type { EntryDefinition, EntryKind } from './entry-types.ts';

/**
 * Where each kind is served over HTTP (kinds without a route are not callable over HTTP yet).
 * LiveQueries are readable one-shot like queries; their SSE stream is a separate route.
 */
export const entryRoutes: Partial<Record<EntryKind, string>> = {
  command: 'POST /commands/',
  query: 'POST /queries/',
  liveQuery: 'POST /queries/',
};

/**
 * The route of one entry, e.g. `POST /commands/createNote` or `GET /api/tickets/:id` (endpoints
 * declare theirs); `null` when it is not served over HTTP.
 */
export function entryRoute(name: string, entry: EntryDefinition): string | null {
  if (entry.kind === 'endpoint') return `${String(entry.options.method)} ${String(entry.options.path)}`;
  const route = entryRoutes[entry.kind];
  return route === undefined ? null : `${route}${name}`;
}
