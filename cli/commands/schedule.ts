import { defineCommand } from 'citty';
import { fetchAdmin } from '../../toolchain/admin/admin-client.ts';
import { adminArgs, adminTarget } from '../admin-args.ts';
import { log, printJson } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

const line = (call: any) =>
  `${call.id} ${call.entry} ${call.status} · at ${call.runAt} · attempt ${call.attempts}${call.tenantId ? ` · tenant ${call.tenantId}` : ''}${call.lastError ? ` · ${call.lastError}` : ''}`;

const list = defineCommand({
  meta: { name: 'list', description: 'Scheduled calls (ctx.scheduler), soonest first; by default those still to run' },
  args: {
    ...adminArgs,
    status: { type: 'string', description: 'Only calls in this status (pending, running, delivered, dead, cancelled; default pending)' },
    limit: { type: 'string', description: 'At most this many calls (default 50, max 1000)' },
  },
  async run({ args }) {
    const query = new URLSearchParams();
    if (args.status) query.set('status', args.status);
    if (args.limit) query.set('limit', args.limit);
    const result = (await fetchAdmin(adminTarget(args), `/_fw/schedule?${query}`)) as { calls: any[] };
    if (args.json) return printJson({ ok: true, ...result });
    if (result.calls.length === 0) return log('No scheduled calls match.');
    for (const call of result.calls) log(line(call));
  },
});

const cancel = defineCommand({
  meta: { name: 'cancel', description: 'Cancel a scheduled call that has not started' },
  args: { ...adminArgs, id: { type: 'positional', description: 'The call id (what runAfter/runAt returned)', required: true } },
  async run({ args }) {
    const result = (await fetchAdmin(adminTarget(args), `/_fw/schedule/${encodeURIComponent(args.id)}/cancel`, 'POST')) as any;
    if (args.json) return printJson({ ok: true, ...result });
    log(result.cancelled ? `${result.id} cancelled.` : `${result.id} is ${result.status}; nothing to cancel.`);
  },
});

export default defineCommand({
  meta: commandMeta('schedule'),
  subCommands: { list, cancel },
});
