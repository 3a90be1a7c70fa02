import type { EntryKind } from '../../runtime/core/entry-types.ts';
import { fwVersion } from '../../runtime/core/version.ts';
import type { AppModel, CronModel, ExternalEntryModel } from '../analyse/app-model.ts';

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
  /** The entries of external services, called through `POST /external/<service>/…`. */
  external: Array<Pick<ExternalEntryModel, 'qualifiedName' | 'service' | 'name' | 'kind' | 'route' | 'policy' | 'risk' | 'tenantScoped' | 'description' | 'args'>>;
  /** The crons of `src/crons.ts` (docs/scheduling.md), by name; absent when the app has none. */
  crons?: CronModel[];
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
    external: model.external.flatMap((service) =>
      service.entries.map((e) => ({
        qualifiedName: e.qualifiedName,
        service: e.service,
        name: e.name,
        kind: e.kind,
        route: e.route,
        policy: e.policy,
        risk: e.risk,
        tenantScoped: e.tenantScoped,
        description: e.description,
        args: e.args,
      })),
    ),
    ...(model.crons.length > 0 ? { crons: model.crons } : {}),
  };
}
