import path from 'node:path';
import { defineCommand } from 'citty';
import { agentEventKinds, agentSources, ingestAgentEvents, listAgentEvents, type AgentEvent } from '../../toolchain/agent-events/agent-events.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { log, printJson } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

const common = {
  root: { type: 'string', description: 'The app directory (events go to <root>/.fw/agent-events.jsonl)', default: '.' },
  source: { type: 'string', description: `The agent: ${agentSources.join(', ')}` },
  json: { type: 'boolean', description: 'Print one JSON document' },
} as const;

const ingest = defineCommand({
  meta: {
    name: 'ingest',
    description: 'Store coding-agent hook payloads as redacted fw.agent-event.v1 events. Reads one JSON payload or JSON Lines from stdin (a Claude Code or Codex hook command), or the payload argument (Codex notify appends it).',
  },
  args: {
    payload: { type: 'positional', description: 'One JSON payload instead of stdin', required: false },
    ...common,
    source: { ...common.source, description: `The agent: ${agentSources.join(', ')} (default: detected from the payload)` },
  },
  async run({ args }) {
    const input = typeof args.payload === 'string' && args.payload !== '' ? args.payload : await readStdin();
    const result = await ingestAgentEvents(path.resolve(args.root), input, args.source);
    if (result.ingested === 0) {
      throw new FwFailure('no_agent_events', result.rejected.length === 0 ? 'No agent event payload was given.' : `No agent event was stored: ${result.rejected.length} line(s) rejected.`, {
        suggestions: ['Pipe one hook payload (a JSON object) or JSON Lines into fw agent events ingest.'],
        diagnostics: result.rejected.map((r) => ({ path: `line ${r.line}`, code: 'rejected_agent_event', message: r.message })),
      });
    }
    if (args.json) return printJson({ ok: true, ...result });
    for (const r of result.rejected) log(`  ✖ line ${r.line}: ${r.message}`);
    log(`fw agent events: stored ${result.ingested} event(s) in ${result.file}${result.rejected.length > 0 ? `, rejected ${result.rejected.length}` : ''}`);
  },
});

const list = defineCommand({
  meta: { name: 'list', description: 'The stored agent events, newest first' },
  args: {
    ...common,
    kind: { type: 'string', description: `Only this kind: ${agentEventKinds.join(', ')}` },
    limit: { type: 'string', description: 'At most this many events', default: '20' },
  },
  async run({ args }) {
    const result = await listAgentEvents(path.resolve(args.root), {
      limit: Number(args.limit),
      ...(args.source ? { source: args.source } : {}),
      ...(args.kind ? { kind: args.kind } : {}),
    });
    if (args.json) return printJson({ ok: true, ...result });
    log(`${result.events.length} of ${result.total} agent event(s) in ${result.file}`);
    for (const event of result.events) log(`  ${describeEvent(event)}`);
  },
});

function describeEvent(event: AgentEvent): string {
  const tool = event.tool ? ` · ${event.tool.name} (${event.tool.category})` : '';
  const outcome = event.summary.success === false ? ' · failed' : '';
  const session = event.session ? ` · session ${event.session.id}` : '';
  return `${event.occurredAt}  ${event.source.padEnd(11)} ${event.kind.padEnd(16)} ${event.sourceEvent ?? '–'}${tool}${outcome}${session}`;
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) {
    throw new FwFailure('missing_input', 'fw agent events ingest reads the payload from stdin, and nothing is piped in.', {
      suggestions: ['echo \'{"hook_event_name":"Stop","session_id":"…"}\' | fw agent events ingest', 'Register it as a hook command, e.g. Claude Code: "command": "npx fw agent events ingest --source claude-code"'],
    });
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

// Not `export default defineCommand(…)`: see cli/commands/ai.ts (TypeScript 6 and dynamic imports).
const agent = defineCommand({
  meta: commandMeta('agent'),
  subCommands: {
    events: defineCommand({
      meta: { name: 'events', description: 'Ingest and list fw.agent-event.v1 events' },
      subCommands: { ingest, list },
    }),
  },
});

export default agent;
