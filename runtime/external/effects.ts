import type { FwDatabase } from '../db/database.ts';
import { enqueueInTransaction } from '../db/outbox.ts';
import type { Auth } from '../core/entry-types.ts';
import { FwError } from '../core/errors.ts';
import { recordInvalidations } from '../db/live-capture.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import type { ManifestEffect, ManifestEntry } from '../core/external-manifest.ts';

/** A declared effect in its object form. */
export interface EffectDeclaration {
  name: string;
  tables: string[];
  liveQueries: string[];
}

/** `"ticket.created"` → `{ name: "ticket.created", tables: [], liveQueries: [] }`. */
export function normalizeEffect(effect: ManifestEffect): EffectDeclaration {
  return typeof effect === 'string' ? { name: effect, tables: [], liveQueries: [] } : { name: effect.name, tables: effect.tables ?? [], liveQueries: effect.liveQueries ?? [] };
}

/**
 * The tables an effect invalidates: the tables it names, plus, for each liveQuery it names, the
 * tables that liveQuery declares in `reads`. Invalidating one table a live group listens to re-runs
 * the whole group, and declared reads are always among them (the hub indexes them even before a
 * group's first run), so they suffice. A liveQuery without declared `reads` learns its tables only
 * when it runs (from its Kysely query trees, in the process that runs it): then every table of the
 * schema is invalidated — conservative, never missed — and `conservative` says so.
 *
 * @example effectTables(app, { name: 'ticket.created', tables: [], liveQueries: ['openTickets'] }) // { tables: ['tickets'], conservative: false }
 */
export function effectTables(app: AppDefinition, effect: EffectDeclaration): { tables: string[]; conservative: boolean } {
  const tables = new Set(effect.tables);
  let conservative = false;
  for (const name of effect.liveQueries) {
    const entry = app.entries.get(name);
    const reads = entry?.kind === 'liveQuery' && Array.isArray(entry.options.reads) ? (entry.options.reads as string[]) : [];
    if (reads.length > 0) for (const table of reads) tables.add(table);
    else conservative = true;
  }
  if (conservative) for (const table of Object.keys(app.schema.tables)) tables.add(table);
  return { tables: [...tables].sort(), conservative };
}

/** Every table a command's effects invalidate, sorted (empty for queries: they have no effects). */
export function invalidatedTables(app: AppDefinition, entry: ManifestEntry): string[] {
  if (entry.kind !== 'command') return [];
  return [...new Set((entry.effects ?? []).flatMap((e) => effectTables(app, normalizeEffect(e)).tables))].sort();
}

/**
 * Effects that name a table the schema does not declare or a liveQuery the app does not have — each a
 * message naming the service, entry, effect and the fix. `checkApp` refuses to load such an app, so
 * an effect never silently invalidates nothing.
 */
export function effectProblems(app: AppDefinition, service: { manifest: { service: { name: string }; entries: ManifestEntry[] } }): string[] {
  const problems: string[] = [];
  const knownTables = Object.keys(app.schema.tables).sort();
  const knownLive = [...app.entries].filter(([, e]) => e.kind === 'liveQuery').map(([n]) => n).sort();
  for (const entry of service.manifest.entries) {
    if (entry.kind !== 'command') continue;
    const where = `external command "${service.manifest.service.name}.${entry.name}"`;
    for (const effect of (entry.effects ?? []).map(normalizeEffect)) {
      for (const table of effect.tables) {
        if (app.schema.tables[table] !== undefined) continue;
        problems.push(
          `${where}: effect "${effect.name}" names table "${table}", which src/fw/schema.ts does not declare (tables: ${knownTables.join(', ') || '(none)'}). Fix the name in the manifest's effects, or add the table to the schema.`,
        );
      }
      for (const name of effect.liveQueries) {
        const entryKind = app.entries.get(name)?.kind;
        if (entryKind === 'liveQuery') continue;
        problems.push(
          `${where}: effect "${effect.name}" names liveQuery "${name}", which ${entryKind ? `is a ${entryKind}, not a liveQuery` : 'the app does not define'} (liveQueries: ${knownLive.join(', ') || '(none)'}). Fix the name in the manifest's effects, or name the tables in "tables".`,
        );
      }
    }
  }
  return problems;
}

/**
 * Records a successful command's effects, in one transaction as the caller: one `_fw_outbox` row per
 * effect (event = its name) and one invalidation per table `effectTables` gives — for the caller's
 * tenant on tenant-scoped tables, for every tenant otherwise — so live queries over them refresh.
 */
export async function recordEffects(
  app: AppDefinition,
  db: FwDatabase,
  ref: { service: string; entry: ManifestEntry },
  call: { auth: Auth; traceId: string },
): Promise<void> {
  const effects = (ref.entry.effects ?? []).map(normalizeEffect);
  if (effects.length === 0) return;
  const tables = invalidatedTables(app, ref.entry);
  await db.transaction({ readOnly: false, auth: call.auth, traceId: call.traceId, label: `external ${ref.service}.${ref.entry.name} (effects)` }, async (trx) => {
    await enqueueInTransaction(
      trx,
      call.traceId,
      effects.map((effect) => ({ event: effect.name, payload: { service: ref.service, entry: ref.entry.name, external: true } })),
    );
    await recordInvalidations(
      trx,
      tables.map((table) => ({ table, tenantId: app.schema.tables[table]?.tenantScoped ? call.auth.tenantId : null })),
    );
  });
}

/** Throws before the service is called when an effect could not be recorded (an app `checkApp` did not vet). */
export function assertEffectsKnown(app: AppDefinition, service: { manifest: { service: { name: string }; entries: ManifestEntry[] } }, entry: ManifestEntry): void {
  const problems = effectProblems(app, { manifest: { service: service.manifest.service, entries: [entry] } });
  if (problems.length > 0) {
    throw new FwError('internal', problems[0]!, { diagnostics: problems.map((message) => ({ path: 'effects', code: 'unknown_effect_target', message })) });
  }
}
