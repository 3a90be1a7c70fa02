import path from 'node:path';
import { defineCommand } from 'citty';
import { openAppDatabase } from '../../plugin/dev-server/api-server.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { loadAppOnce } from '../../plugin/load-app-once.ts';
import { applyMigration } from '../../runtime/db/migrate.ts';
import { readDbStatus } from '../../toolchain/db/db-status.ts';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import type { FwDatabase } from '../../runtime/db/database.ts';
import { log, printJson } from '../output.ts';

const common = {
  root: { type: 'string', description: 'The app directory', default: '.' },
  json: { type: 'boolean', description: 'Print one JSON document' },
} as const;

async function withAppDatabase<R>(root: string, fn: (app: AppDefinition, db: FwDatabase) => Promise<R>): Promise<R> {
  const app = await loadAppOnce(path.resolve(root));
  const db = await openAppDatabase(path.resolve(root));
  try {
    return await fn(app, db);
  } finally {
    await db.close();
  }
}

const migrate = defineCommand({
  meta: { name: 'migrate', description: 'Apply pending schema changes (additive ones; destructive ones need --accept-data-loss)' },
  args: { ...common, 'accept-data-loss': { type: 'boolean', description: 'Also apply drops of columns and tables' } },
  async run({ args }) {
    const result = await withAppDatabase(args.root, (app, db) =>
      applyMigration(db, app.schema, { acceptDataLoss: Boolean(args['accept-data-loss']) }),
    );
    if (result.blocked.length > 0) {
      throw new FwFailure('migration_blocked', 'Some schema changes need a decision; nothing was applied.', {
        diagnostics: result.blocked,
        suggestions: ['fw db status --json', 'fw db migrate --accept-data-loss  (only if losing that data is intended)'],
      });
    }
    if (args.json) printJson({ ok: true, migrationId: result.migrationId, applied: result.applied });
    else if (result.applied.length === 0) log('fw db migrate: the database is up to date.');
    else {
      log(`fw db migrate: applied ${result.applied.length} change(s) as migration ${result.migrationId}:`);
      for (const change of result.applied) log(`  + ${change.description}`);
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
    if (result.via) log(`(from the running fw dev at ${result.via}, which holds the embedded database)`);
    log(`Applied migrations: ${result.applied.length}`);
    for (const m of result.applied) log(`  #${m.id} ${m.appliedAt} (${m.changes.length} change(s))`);
    log(`Pending: ${result.pending.length}`);
    for (const c of result.pending) log(`  + ${c.description}`);
    if (result.blocked.length > 0) {
      log(`Needs a decision: ${result.blocked.length}`);
      for (const d of result.blocked) log(`  ! ${d.path}: ${d.message}${d.hint ? `\n    hint: ${d.hint}` : ''}`);
    }
  },
});

export default defineCommand({
  meta: { name: 'db', description: 'Database migrations' },
  subCommands: { migrate, status },
});
