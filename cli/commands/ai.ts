import path from 'node:path';
import { defineCommand } from 'citty';
import { listAiAgents, listAiTools, showAiTrace } from '../../toolchain/ai/ai-inspect.ts';
import { log, printJson } from '../output.ts';
import { printAgentTools } from './inspect.ts';
import { commandMeta } from '../command-meta.ts';

const common = {
  root: { type: 'string', description: 'The app directory', default: '.' },
  json: { type: 'boolean', description: 'Print one JSON document' },
} as const;

const tools = defineCommand({
  meta: { name: 'tools', description: 'The tools agents can call: auto-tools of entries and aiTools, with risk and approval' },
  args: common,
  async run({ args }) {
    const result = await listAiTools(args.root);
    if (args.json) return printJson({ ok: true, ...result });
    printAgentTools(result);
  },
});

const agents = defineCommand({
  meta: { name: 'agents', description: 'The agents: model, step limit and tools' },
  args: common,
  async run({ args }) {
    const result = await listAiAgents(args.root);
    if (args.json) return printJson({ ok: true, ...result });
    log(`${result.agents.length} agent(s) · models: ${result.models === 'mock' ? 'fw scripted mock (no AI_GATEWAY_API_KEY, or FW_AI=mock)' : 'AI Gateway'}`);
    for (const a of result.agents) {
      log(`  ${a.name.padEnd(20)} ${a.provider}:${a.model} · max ${a.maxSteps} steps${a.maxStepsDeclared ? '' : ' (default: declare stopWhen)'} · tools ${a.tools.join(', ') || '–'}`);
    }
  },
});

const trace = defineCommand({
  meta: { name: 'trace', description: 'One AI run by trace id: steps, tokens, latency, tool calls, approvals (no prompts unless recorded)' },
  args: {
    ...common,
    traceId: { type: 'positional', description: 'The traceId of an /ai/agents/run answer or an x-fw-trace-id header', required: true },
    url: { type: 'string', description: 'Ask this runtime instead of the app’s running fw dev or database' },
    'admin-token': { type: 'string', description: 'Admin token for a runtime outside dev mode (default: FW_ADMIN_TOKEN)' },
  },
  async run({ args }) {
    const result = await showAiTrace(path.resolve(args.root), args.traceId, {
      ...(args.url ? { url: args.url } : {}),
      ...(args['admin-token'] ? { token: args['admin-token'] } : {}),
    });
    if (args.json) return printJson({ ok: true, ...result });
    for (const run of result.runs) {
      log(`${run.kind} ${run.agent ?? ''} · ${run.provider}:${run.model} · ${run.status}${run.errorCode ? ` (${run.errorCode})` : ''} · ${run.inputTokens}+${run.outputTokens} tokens · ${run.latencyMs} ms${run.costUsd === null ? '' : ` · $${run.costUsd}`}`);
      for (const step of run.steps) {
        log(`  step ${step.step}: ${step.finishReason}, ${step.inputTokens}+${step.outputTokens} tokens, ${step.latencyMs} ms`);
        for (const call of step.toolCalls) log(`    ${call.tool} → ${call.outcome}${'durationMs' in call ? ` in ${call.durationMs} ms` : ''}${'errorCode' in call && call.errorCode ? ` (${call.errorCode})` : ''}`);
      }
      for (const a of run.approvals) log(`  approval ${a.approvalId} for ${a.tool ?? '?'}: ${a.approved ? 'approved' : 'denied'}`);
    }
  },
});

// Not `export default defineCommand(…)`: TypeScript 6 leaves `.ts` in a dynamic import inside an
// `export default <expression>` unrewritten (rewriteRelativeImportExtensions), and dist/ then imports
// ./ai-redteam.ts, which does not exist there.
const ai = defineCommand({
  meta: commandMeta('ai'),
  subCommands: {
    tools,
    agents,
    trace,
    redteam: () => import('./ai-redteam.ts').then((m) => m.default),
  },
});

export default ai;
