import { defineCommand } from 'citty';
import { migrateDatabase } from '../../toolchain/db/db-migrate.ts';
import { readDbStatus } from '../../toolchain/db/db-status.ts';
import { log, printJson } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

const common = {
  root: { type: 'string', description: 'The app directory', default: '.' },
  json: { type: 'boolean', description: 'Print one JSON document' },
} as const;

/** `file:line:column` of a diagnostic that knows its place in the schema file, else nothing. */
const placeOf = (d: { file?: string; line?: number; column?: number }) => (d.file ? ` (${d.file}${d.line ? `:${d.line}:${d.column ?? 1}` : ''})` : '');

const migrate = defineCommand({
  meta: {
    name: 'migrate',
    description: 'Apply pending schema changes (additive ones; destructive ones need --accept-data-loss), through the running fw dev when it holds the embedded database',
  },
  args: {
    ...common,
    'accept-data-loss': { type: 'boolean', description: 'Also apply drops of columns and tables' },
    'dry-run': { type: 'boolean', description: 'Print the plan (changes and what is blocked) and apply nothing' },
  },
  async run({ args }) {
    const result = await migrateDatabase(args.root, { acceptDataLoss: Boolean(args['accept-data-loss']), dryRun: Boolean(args['dry-run']) });
    if (args.json) {
      const { dryRun, ...rest } = result;
      printJson({ ok: true, ...(dryRun ? { dryRun } : {}), ...rest });
      return;
    }
    if (result.via) log(`(through the running fw dev at ${result.via}, which holds the embedded database)`);
    if (result.dryRun) {
      log(`fw db migrate --dry-run: ${result.changes.length} change(s) would be applied${result.blocked.length > 0 ? `, ${result.blocked.length} need a decision (nothing would be applied)` : ''}:`);
      for (const change of result.changes) log(`  ${change.destructive ? '-' : '+'} ${change.description}`);
      for (const d of result.blocked) log(`  ! ${d.path}${placeOf(d)}: ${d.message}${d.hint ? `\n    fix: ${d.hint}` : ''}`);
    } else if (result.applied.length === 0) log('fw db migrate: the database is up to date.');
    else {
      log(`fw db migrate: applied ${result.applied.length} change(s) as migration ${result.migrationId}:`);
      for (const change of result.applied) log(`  ${change.destructive ? '-' : '+'} ${change.description}`);
    }
  },
});

const status = defineCommand({
  meta: { name: 'status', description: 'Show applied and pending migrations (through the running fw dev when it holds the embedded database)' },
  args: common,
  async run({ args }) {
    const result = await readDbStatus(args.root);
    if (args.json) {
      printJson({ ok: true, ...result });
      return;
    }
    if (result.via) log(`(from the running fw dev at ${result.via}, which holds the embedded database${result.held ? ' and answers every entry with schema_blocked until the changes below are resolved' : ''})`);
    log(`Applied migrations: ${result.applied.length}`);
    for (const m of result.applied) log(`  #${m.id} ${m.appliedAt} (${m.changes.length} change(s))`);
    log(`Pending: ${result.pending.length}`);
    for (const c of result.pending) log(`  + ${c.description}`);
    if (result.blocked.length > 0) {
      log(`Needs a decision: ${result.blocked.length}`);
      for (const d of result.blocked) log(`  ! ${d.path}${placeOf(d)}: ${d.message}${d.hint ? `\n    fix: ${d.hint}` : ''}`);
    }
  },
});

export default defineCommand({
  meta: commandMeta('db'),
  subCommands: { migrate, status },
});
