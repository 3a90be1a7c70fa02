import type { EntryKind } from '../../runtime/entries.ts';
import { fwVersion } from '../../runtime/version.ts';
import type { AppModel } from '../analyse/app-model.ts';

/** `src/fw/_generated/api.json`: every entry's route, args JSON Schema, policy and tenant scope. */
export interface ApiJson {
  fwVersion: string;
  entries: Array<{
    name: string;
    kind: EntryKind;
    route: string | null;
    policy: string;
    tenantScoped: boolean | 'unknown';
    description: string | null;
    /** JSON Schema (draft 2020-12) of the args callers send; null when the schema offers none. */
    args: Record<string, unknown> | null;
  }>;
}

/**
 * Builds api.json from the analysed app.
 *
 * @example
 *   buildApiJson(model).entries[0]
 *   // { name: 'createNote', kind: 'command', route: 'POST /commands/createNote', policy: 'user', tenantScoped: true, … }
 */
export function buildApiJson(model: AppModel): ApiJson {
  return {
    fwVersion,
    entries: model.entries.map((entry) => ({
      name: entry.name,
      kind: entry.kind,
      route: entry.route,
      policy: entry.policy,
      tenantScoped: entry.tenantScoped,
      description: entry.description,
      args: entry.args.kind === 'json-schema' ? entry.args.schema : null,
    })),
  };
}
