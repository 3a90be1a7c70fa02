import { defineCommand } from 'citty';
import { fetchAdmin } from '../../toolchain/admin/admin-client.ts';
import { adminArgs, adminTarget } from '../admin-args.ts';
import { log, printJson } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

const line = (run: any) =>
  `${run.runId} ${run.workflow} ${run.status}${run.cancelRequested && run.status === 'running' ? ' (cancel requested)' : ''} · attempt ${run.attempts} · ${run.createdAt}${run.lastError ? ` · ${run.lastError}` : ''}`;

const list = defineCommand({
  meta: { name: 'list', description: 'Recent workflow runs, newest first' },
  args: {
    ...adminArgs,
    status: { type: 'string', description: 'Only runs in this status (pending, running, sleeping, retrying, completed, failed, cancelled)' },
    workflow: { type: 'string', description: 'Only runs of this workflow' },
    limit: { type: 'string', description: 'At most this many runs (default 50, max 1000)' },
  },
  async run({ args }) {
    const query = new URLSearchParams();
    if (args.status) query.set('status', args.status);
    if (args.workflow) query.set('workflow', args.workflow);
    if (args.limit) query.set('limit', args.limit);
    const result = (await fetchAdmin(adminTarget(args), `/_fw/workflows?${query}`)) as { runs: any[] };
    if (args.json) return printJson({ ok: true, ...result });
    if (result.runs.length === 0) return log('No workflow runs match.');
    for (const run of result.runs) log(line(run));
  },
});

const show = defineCommand({
  meta: { name: 'show', description: 'One workflow run and its finished steps' },
  args: { ...adminArgs, runId: { type: 'positional', description: 'The run id', required: true } },
  async run({ args }) {
    const run = (await fetchAdmin(adminTarget(args), `/_fw/workflows/${encodeURIComponent(args.runId)}`)) as any;
    if (args.json) return printJson({ ok: true, ...run });
    log(line(run));
    for (const step of run.steps) log(`  ✓ ${step.name} (attempt ${step.attempt}, ${step.durationMs} ms)`);
    if (run.waitingFor?.kind === 'sleep') log(`  … sleeping in ${run.waitingFor.step} until ${run.waitingFor.until}`);
    if (run.waitingFor?.kind === 'event') {
      const match = Object.keys(run.waitingFor.match ?? {}).length > 0 ? ` matching ${JSON.stringify(run.waitingFor.match)}` : '';
      log(`  … waiting in ${run.waitingFor.step} for signal "${run.waitingFor.event}"${match}${run.waitingFor.until ? `, timing out at ${run.waitingFor.until}` : ''}`);
    }
  },
});

const cancel = defineCommand({
  meta: { name: 'cancel', description: 'Cancel a run: at once between attempts, before its next step while running' },
  args: { ...adminArgs, runId: { type: 'positional', description: 'The run id', required: true } },
  async run({ args }) {
    const result = (await fetchAdmin(adminTarget(args), `/_fw/workflows/${encodeURIComponent(args.runId)}/cancel`, 'POST')) as any;
    if (args.json) return printJson({ ok: true, ...result });
    if (!result.cancelRequested) return log(`${result.runId} had already ended (${result.status}); nothing to cancel.`);
    log(result.status === 'cancelled' ? `${result.runId} cancelled.` : `${result.runId} is running: it stops before its next step.`);
  },
});

export default defineCommand({
  meta: commandMeta('workflows'),
  subCommands: { list, show, cancel },
});
