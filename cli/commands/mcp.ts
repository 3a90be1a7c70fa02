import path from 'node:path';
import { defineCommand } from 'citty';
import { fetchAdmin } from '../../toolchain/admin/admin-client.ts';
import { serveDevMcp } from '../../toolchain/mcp/dev-mcp-server.ts';
import { adminArgs, adminTarget } from '../admin-args.ts';
import { log, printJson } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

const who = (row: any) => `${row.userId ?? 'anonymous'}${row.tenantId ? ` · tenant ${row.tenantId}` : ''}`;

const audit = defineCommand({
  meta: { name: 'audit', description: 'MCP calls of the running runtime, newest first: who, which entry, the outcome and the trace id (_fw.mcp_audit)' },
  args: {
    ...adminArgs,
    limit: { type: 'string', description: 'At most this many calls (default 100, max 1000)' },
    trace: { type: 'string', description: 'Only the calls of this trace id' },
  },
  async run({ args }) {
    const query = new URLSearchParams();
    if (args.limit) query.set('limit', args.limit);
    if (args.trace) query.set('trace', args.trace);
    const result = (await fetchAdmin(adminTarget(args), `/_fw/mcp/audit?${query}`)) as { calls: any[] };
    if (args.json) return printJson({ ok: true, ...result });
    if (result.calls.length === 0) return log('No MCP calls recorded.');
    for (const row of result.calls) log(`${row.at} ${row.entry} (${row.kind}) ${row.outcome} · ${who(row)}${row.client ? ` · ${row.client}` : ''}${row.traceId ? ` · trace ${row.traceId}` : ''}`);
  },
});

const approvals = defineCommand({
  meta: { name: 'approvals', description: 'MCP calls waiting for a person’s approval (--all: recent ones in every state)' },
  args: { ...adminArgs, all: { type: 'boolean', description: 'Every recent approval, not only those waiting' } },
  async run({ args }) {
    const result = (await fetchAdmin(adminTarget(args), `/_fw/mcp/approvals${args.all ? '' : '?pending=1'}`)) as { approvals: any[] };
    if (args.json) return printJson({ ok: true, ...result });
    if (result.approvals.length === 0) return log(args.all ? 'No MCP approvals.' : 'No MCP call is waiting for approval.');
    for (const approval of result.approvals) log(`${approval.approvalId} ${approval.tool} ${approval.state} · ${who(approval)} · expires ${approval.expiresAt} · ${JSON.stringify(approval.input)}`);
  },
});

/** A person's decision, on the operator's channel (the agent does not hold it: dev mode's machine, or the admin token). */
const decide = (approved: boolean) =>
  defineCommand({
    meta: { name: approved ? 'approve' : 'refuse', description: approved ? 'Approve an MCP call (once, for the caller who asked, with its arguments)' : 'Refuse an MCP call' },
    args: { ...adminArgs, id: { type: 'positional', description: 'The approval id (fw mcp approvals lists them)', required: true } },
    async run({ args }) {
      const result = (await fetchAdmin(adminTarget(args), `/_fw/mcp/approvals/${encodeURIComponent(args.id)}`, 'POST', { approved })) as any;
      if (args.json) return printJson({ ok: true, ...result });
      log(`${result.approvalId} ${approved ? 'approved: the agent’s next identical call runs it, once' : 'refused: the agent’s next identical call is told so'}.`);
    },
  });

const serve = defineCommand({
  meta: { name: 'serve', description: 'fw for coding agents, as an MCP server on stdio (dev): inspect, check, db status, run an entry as an identity; read-only unless --allow-writes' },
  args: {
    root: { type: 'string', description: 'The app directory', default: '.' },
    url: { type: 'string', description: 'The running runtime fw_run_entry calls (default: the app’s running fw dev)' },
    'allow-writes': { type: 'boolean', description: 'Let fw_run_entry run commands (the developer’s choice; an agent cannot turn it on)' },
  },
  async run({ args }) {
    await serveDevMcp({ root: path.resolve(args.root), allowWrites: args['allow-writes'] === true, ...(args.url ? { url: args.url } : {}) });
  },
});

export default defineCommand({
  meta: commandMeta('mcp'),
  subCommands: { serve, audit, approvals, approve: decide(true), refuse: decide(false) },
});
