import type { EntryKind } from '../../runtime/entries.ts';
import { fwVersion } from '../../runtime/version.ts';
import type { AppModel } from '../analyse/app-model.ts';
import type { Unresolved } from '../analyse/entry-access.ts';

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
}

/**
 * Builds capabilityMap.json from the analysed app.
 *
 * @example
 *   buildCapabilityMap(model).tables
 *   // [{ name: 'notes', tenantScoped: true, readBy: ['listNotes', 'liveNotes'], writtenBy: ['createNote'] }]
 */
export function buildCapabilityMap(model: AppModel): CapabilityMap {
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
  };
}
