import type { AppDefinition } from '../core/app-definition.ts';
import { entryRoute } from '../core/entry-routes.ts';

/** Every entry of the app with its kind, policy, route and description (`GET /entries`, the dashboard), by kind then name. */
export function listEntries(app: AppDefinition) {
  return [...app.entries]
    .map(([name, entry]) => {
      const route = entryRoute(name, entry);
      return {
        name,
        kind: entry.kind,
        policy: entry.policy,
        ...(route ? { route } : {}),
        ...(entry.description ? { description: entry.description } : {}),
      };
    })
    .sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
}
