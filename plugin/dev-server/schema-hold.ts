import type { Diagnostic } from '../../runtime/core/errors.ts';
import { FwError } from '../../runtime/core/errors.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { locateSchemaDiagnostics } from '../schema-locations.ts';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import type { FwDatabase } from '../../runtime/db/database.ts';
import { applyMigration } from '../../runtime/db/migrate.ts';

/** The refusals `--accept-data-loss` applies (drops of columns and tables); a type change, say, it does not. */
const DATA_LOSS_CODES = new Set(['drop_column', 'drop_table', 'possible_rename']);

/**
 * What to do about a blocked schema, beside a running fw dev as much as without one: `fw db migrate
 * --accept-data-loss` only when some change is a drop it would apply — for any other, it would apply
 * nothing and fail the same way.
 */
export function schemaBlockedSuggestions(blocked: readonly Diagnostic[]): string[] {
  return [
    'Undo the change in the schema file, or follow the hint under each change above.',
    'fw db status  (every pending and blocked change; works beside fw dev)',
    'fw db migrate --dry-run  (the plan, applied nowhere)',
    ...(blocked.some((d) => DATA_LOSS_CODES.has(d.code))
      ? ['fw db migrate --accept-data-loss  (applies drops of columns and tables, beside fw dev too; only if losing that data is intended)']
      : []),
  ];
}

/**
 * The failure of a migration that needs a decision: every refused change with its place in the schema
 * file (file, line, column) when the app's `root` is given, why it is refused and its fix (`hint`).
 */
export function schemaBlockedFailure(root: string | undefined, blocked: readonly Diagnostic[], served: boolean): FwFailure {
  const count = blocked.length === 1 ? 'a change' : `${blocked.length} changes`;
  const consequence = served
    ? ` Until ${blocked.length === 1 ? 'it is' : 'they are'} resolved, fw dev answers every entry with schema_blocked instead of running code against a database that disagrees with it.`
    : '';
  return new FwFailure('migration_blocked', `The schema has ${count} fw will not apply automatically; nothing was applied.${consequence}`, {
    diagnostics: root === undefined ? [...blocked] : locateSchemaDiagnostics(root, blocked),
    suggestions: schemaBlockedSuggestions(blocked),
  });
}

/** What requests are answered while the schema is blocked (503 `schema_blocked`, with the same diagnostics). */
export function schemaHoldError(failure: FwFailure): FwError {
  return new FwError(
    'schema_blocked',
    `fw dev serves no entry while the app's schema has ${failure.diagnostics.length === 1 ? 'a change' : `${failure.diagnostics.length} changes`} fw will not apply automatically (diagnostics: each change, its place and its fix). ${failure.suggestions.join(' Or: ')}`,
    { diagnostics: failure.diagnostics },
  );
}

/**
 * Applies the app's additive migrations; a change that needs a decision fails with `migration_blocked`
 * (with `root`, each change carries its place in the schema file).
 */
export async function migrateOrFail(db: FwDatabase, app: AppDefinition, root?: string): Promise<void> {
  const migration = await applyMigration(db, app.schema);
  if (migration.blocked.length > 0) throw schemaBlockedFailure(root, migration.blocked, false);
}
