import { defineCommand } from 'citty';
import { fetchAdmin } from '../../toolchain/admin/admin-client.ts';
import { adminArgs as common, adminTarget as target } from '../admin-args.ts';
import { log, printJson } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

const status = defineCommand({
  meta: { name: 'status', description: 'Live-query status of the running runtime: reader, wakeups, groups, subscriptions' },
  args: common,
  async run({ args }) {
    const result = (await fetchAdmin(target(args), '/_fw/live/status')) as any;
    if (args.json) return printJson({ ok: true, ...result });
    log(`revision ${result.revision} · ${result.connections} connection(s), ${result.subscriptions} subscription(s) in ${result.groups} group(s)`);
    log(`wakeups: ${result.reader.wakeups?.mode ?? '?'} (listener ${result.reader.wakeups?.listener ?? '?'}) · runs ${result.runs} (${result.unchangedRuns} unchanged) · snapshots sent ${result.snapshotsSent}`);
    log(`log: revisions ${result.log.oldestRetainedRevision ?? '–'}…${result.log.latestRevision}, pruned through ${result.log.prunedThrough}`);
    const problem = result.reader.wakeups?.problem;
    if (problem) log(`${problem.code}: ${problem.message}\n  fix: ${problem.fix}`);
    for (const q of result.liveQueries) {
      log(`  ${q.name}: ${q.subscriptions} subscription(s), ${q.groups} group(s) (${q.preciseGroups ?? 0} precise), reads ${q.reads.join(', ') || '(not yet run)'}`);
      for (const group of q.groupList ?? []) {
        const reads = group.readSet ? Object.entries(group.readSet as Record<string, string[]>).map(([table, accesses]) => `${table}: ${accesses.join(' | ')}`).join('; ') : '(not yet run)';
        log(`    args ${JSON.stringify(group.args)} · ${group.runs} run(s), ${group.unchangedRuns} unchanged · ${reads}`);
      }
    }
  },
});

const list = defineCommand({
  meta: { name: 'list', description: 'Recent rows of _fw_live_invalidations, newest first' },
  args: {
    ...common,
    table: { type: 'string', description: 'Only this table' },
    tenant: { type: 'string', description: 'Only this tenant (a UUID, or "null" for writes that concern every tenant)' },
    limit: { type: 'string', description: 'At most this many rows (default 50, max 1000)' },
  },
  async run({ args }) {
    const query = new URLSearchParams();
    if (args.table) query.set('table', args.table);
    if (args.tenant) query.set('tenant', args.tenant);
    if (args.limit) query.set('limit', args.limit);
    const result = (await fetchAdmin(target(args), `/_fw/live/invalidations?${query}`)) as { invalidations: any[] };
    if (args.json) return printJson({ ok: true, ...result });
    if (result.invalidations.length === 0) return log('No invalidations match.');
    for (const row of result.invalidations) {
      log(`#${row.revision} ${row.createdAt} ${row.table} tenant=${row.tenantId ?? '*'}${row.traceId ? ` trace=${row.traceId}` : ''}`);
    }
  },
});

const debug = defineCommand({
  meta: { name: 'debug', description: 'One subscription: its query, identity, group, reads and delivery state' },
  args: { ...common, subscriptionId: { type: 'positional', description: 'The subscriptionId from a live event', required: true } },
  async run({ args }) {
    const result = (await fetchAdmin(target(args), `/_fw/live/subscriptions/${encodeURIComponent(args.subscriptionId)}`)) as any;
    if (args.json) return printJson({ ok: true, ...result });
    log(`${result.subscriptionId}: ${result.liveQuery}(${JSON.stringify(result.args)}) for ${result.auth.userId ?? 'anonymous'} in tenant ${result.auth.tenantId ?? '–'}`);
    log(`  last sent revision ${result.lastSentRevision ?? '–'}; group of ${result.group.subscribers}, reads ${result.group.reads.join(', ')}, ${result.group.runs} run(s), last ${result.group.lastRunMs} ms`);
    log(`  connection ${result.connection.id}: ${result.connection.blocked ? 'slow (blocked)' : 'flowing'}, ${result.connection.pendingEvents} pending, ${result.connection.superseded} superseded`);
    if (result.group.lastError) log(`  last error: ${result.group.lastError.code}: ${result.group.lastError.message}`);
  },
});

export default defineCommand({
  meta: commandMeta('live'),
  subCommands: {
    status,
    invalidations: defineCommand({ meta: { name: 'invalidations', description: 'The invalidation log' }, subCommands: { list } }),
    debug,
  },
});
