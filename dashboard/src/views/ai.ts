import { api } from '../api.ts';
import { ago, badge, h, json, mount, table } from '../h.ts';
import { patch } from '../patch.ts';
import type { View } from '../shell.ts';

interface AiTraceSummary {
  traceId: string;
  kind: string;
  agent: string | null;
  status: string;
  createdAt: string;
}
interface ToolCall {
  toolCallId: string;
  tool: string;
  outcome: 'ok' | 'error' | 'awaiting-approval' | 'denied';
  durationMs?: number;
  errorCode?: string;
}
interface Step {
  step: number;
  model: string;
  finishReason: string;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  toolCalls: ToolCall[];
}
interface Recorded {
  toolCallId: string;
  tool: string;
  input: unknown;
  output?: unknown;
  error?: { code: string; message: string };
}
/** One run as `_fw.ai_runs` keeps it (runtime/ai/traces.ts). */
interface AiRun {
  traceId: string;
  kind: string;
  agent: string | null;
  provider: string;
  model: string;
  status: string;
  errorCode: string | null;
  auth: { userId: string | null; tenantId: string | null };
  steps: Step[];
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  costUsd: number | null;
  content: { prompt: string | null; text: string | null; toolCalls?: Recorded[] } | null;
  createdAt: string;
}
/** An approval from the ledger (`_fw.ai_approvals`), asked for or decided in this request. */
interface Approval {
  approvalId: string;
  tool: string;
  toolCallId: string;
  state: 'pending' | 'used' | 'refused' | 'expired';
  issuedAt: string;
  expiresAt: string;
  decidedAt: string | null;
  issuedTraceId: string | null;
  decidedTraceId: string | null;
}

export const aiView: View = {
  id: 'ai',
  title: 'AI runs',
  render(container, context) {
    let selected = context.param;
    const listBox = h('div');
    const detailBox = h('div');
    mount(container, h('p', { class: 'hint' }, 'Agent runs and ctx.ai calls this app recorded: steps, tool calls, approvals and tokens (prompts, outputs and tool payloads only when the app sets FW_AI_RECORD_CONTENT=1).'), detailBox, listBox);
    const loadDetail = async () => {
      if (!selected) return mount(detailBox);
      const trace = await api<{ traceId: string; runs: AiRun[]; approvals: Approval[] }>(`/_fw/dashboard/api/ai/${encodeURIComponent(selected)}`);
      // An open <details> (the raw trace) stays open across the refresh that redraws it (patch.ts).
      patch(
        detailBox,
        h(
          'article',
          { class: 'card', 'aria-labelledby': 'ai-title' },
          h('header', { class: 'card-head' }, h('h2', { id: 'ai-title' }, 'AI trace'), h('code', { class: 'muted' }, trace.traceId), h('a', { href: `#/requests/${trace.traceId}` }, 'request →')),
          trace.runs.length === 0 ? h('p', { class: 'empty' }, 'No AI run is recorded under this trace id.') : null,
          trace.runs.map((run, i) => runSection(run, i)),
          h('h3', null, 'Approvals'),
          table(
            'Approvals',
            [
              ['Tool', (a) => h('code', null, a.tool)],
              ['Tool call', (a) => h('code', { class: 'muted' }, a.toolCallId)],
              ['State', (a) => approvalBadge(a.state)],
              ['Asked', (a) => (a.issuedTraceId && a.issuedTraceId !== trace.traceId ? h('a', { href: `#/ai/${a.issuedTraceId}`, title: a.issuedAt }, ago(a.issuedAt)) : h('span', { title: a.issuedAt }, ago(a.issuedAt)))],
              [
                'Decided',
                (a) =>
                  a.decidedAt === null
                    ? h('span', { class: 'muted', title: `expires ${a.expiresAt}` }, a.state === 'expired' ? 'never (expired)' : `expires ${new Date(a.expiresAt).toLocaleTimeString()}`)
                    : a.decidedTraceId && a.decidedTraceId !== trace.traceId
                      ? h('a', { href: `#/ai/${a.decidedTraceId}`, title: `decided ${a.decidedAt} in trace ${a.decidedTraceId}` }, ago(a.decidedAt), ' →')
                      : h('span', { title: a.decidedAt }, ago(a.decidedAt)),
              ],
            ],
            trace.approvals,
            'No approval was asked for or decided in this request.',
            { nowrap: true },
          ),
          h('details', { class: 'raw' }, h('summary', null, 'Raw trace (JSON)'), h('pre', { class: 'code', tabindex: 0, 'aria-label': 'Runs of this trace' }, json(trace.runs))),
          h('div', { class: 'actions' }, h('button', { type: 'button', on: { click: () => context.navigate('#/ai') } }, 'Close')),
        ),
      );
    };
    return {
      async refresh() {
        const { traces } = await api<{ traces: AiTraceSummary[] }>('/_fw/ai/traces');
        patch(
          listBox,
          table(
            'Recorded AI runs',
            [
              ['Trace', (t) => h('a', { href: `#/ai/${t.traceId}`, class: 'mono' }, t.traceId.slice(0, 12))],
              ['Kind', (t) => t.kind],
              ['Agent', (t) => (t.agent ? h('code', null, t.agent) : '—')],
              ['Status', (t) => statusBadge(t.status)],
              ['When', (t) => h('span', { title: t.createdAt }, ago(t.createdAt))],
            ],
            traces,
            'No AI run yet. Agents and ctx.ai calls appear here.',
            { rowClass: (t) => (t.traceId === selected ? 'selected' : ''), key: (t) => t.traceId },
          ),
        );
        // Approvals are decided later, by another request: the open trace follows them.
        if (selected) await loadDetail();
      },
      onParam(param) {
        selected = param;
        void loadDetail();
      },
    };
  },
};

/** One run: who and what it cost, the conversation when kept, its tool calls, its steps' usage. */
function runSection(run: AiRun, index: number): HTMLElement {
  const recorded = new Map((run.content?.toolCalls ?? []).map((c) => [c.toolCallId, c]));
  // The calls of the model's steps, then those an approval sent with the request let run first.
  const calls: Array<{ step: number | null; call: ToolCall | null; recorded: Recorded | undefined; id: string; tool: string }> = run.steps.flatMap((s) =>
    s.toolCalls.map((call) => ({ step: s.step, call, recorded: recorded.get(call.toolCallId), id: call.toolCallId, tool: call.tool })),
  );
  for (const r of recorded.values()) if (!calls.some((c) => c.id === r.toolCallId)) calls.unshift({ step: null, call: null, recorded: r, id: r.toolCallId, tool: r.tool });
  const total = run.inputTokens + run.outputTokens;
  const label = `${run.agent ? `Agent ${run.agent}` : run.kind}`;
  return h(
    'section',
    { class: 'ai-run', 'aria-label': `${label} run ${index + 1}` },
    h('header', { class: 'card-head' }, h('h3', { class: 'plain' }, label), statusBadge(run.status), run.errorCode ? badge(run.errorCode, 'bad') : null, badge(run.kind)),
    h(
      'dl',
      { class: 'facts', 'aria-label': 'Usage' },
      h('dt', null, 'Model'),
      h('dd', null, h('code', null, run.model), h('span', { class: 'muted' }, ` · ${run.provider}`)),
      h('dt', null, 'Tokens'),
      h('dd', { 'data-testid': 'ai-tokens' }, `${run.inputTokens} in · ${run.outputTokens} out · ${total} total`),
      h('dt', null, 'Time'),
      h('dd', null, `${run.latencyMs} ms · ${run.steps.length} step${run.steps.length === 1 ? '' : 's'}`, run.costUsd ? ` · $${run.costUsd.toFixed(4)}` : ''),
      h('dt', null, 'Caller'),
      h('dd', null, run.auth.userId ?? 'system', run.auth.tenantId ? h('span', { class: 'muted', title: run.auth.tenantId }, ` · tenant ${run.auth.tenantId.slice(0, 8)}…`) : null, h('span', { class: 'muted', title: run.createdAt }, ` · ${ago(run.createdAt)}`)),
    ),
    h('h3', null, 'Messages'),
    run.content
      ? h(
          'ol',
          { class: 'messages', 'aria-label': 'Messages' },
          run.content.prompt !== null ? h('li', { class: 'message user' }, h('span', { class: 'who' }, 'User'), h('div', { class: 'text' }, run.content.prompt)) : null,
          run.content.text !== null ? h('li', { class: 'message assistant' }, h('span', { class: 'who' }, 'Assistant'), run.content.text ? h('div', { class: 'text' }, run.content.text) : h('div', { class: 'text muted' }, run.status === 'awaiting-approval' ? '(no text: awaiting approval)' : '(no text)')) : null,
        )
      : h('p', { class: 'empty' }, 'Not kept: prompts, answers and tool payloads are recorded only with FW_AI_RECORD_CONTENT=1.'),
    h('h3', null, 'Tool calls'),
    table(
      'Tool calls',
      [
        ['Step', (c) => (c.step === null ? h('span', { class: 'muted', title: 'Approved in this request: ran before the first step' }, 'approved') : c.step)],
        ['Tool', (c) => h('code', null, c.tool)],
        ['Input', (c) => payload(c.recorded ? c.recorded.input : undefined)],
        ['Output', (c) => (c.recorded?.error ? h('span', { class: 'cell', title: c.recorded.error.message }, badge(c.recorded.error.code, 'bad'), ' ', c.recorded.error.message) : payload(c.recorded && 'output' in c.recorded ? c.recorded.output : undefined))],
        ['Outcome', (c) => outcomeBadge(c.call?.outcome ?? (c.recorded?.error ? 'error' : 'ok'))],
        ['Duration', (c) => (c.call?.durationMs !== undefined ? `${c.call.durationMs} ms` : '—')],
      ],
      calls,
      'No tool was called.',
      { nowrap: true },
    ),
    run.steps.length > 0
      ? [
          h('h3', null, 'Model steps'),
          table(
            'Model steps',
            [
              ['Step', (s) => s.step],
              ['Model', (s) => h('code', null, s.model)],
              ['Finish', (s) => s.finishReason],
              ['Input tokens', (s) => s.inputTokens],
              ['Output tokens', (s) => s.outputTokens],
              ['Latency', (s) => `${s.latencyMs} ms`],
            ],
            run.steps,
            '',
            { nowrap: true },
          ),
        ]
      : null,
  );
}

/** A tool's input or output as one line of JSON, whole on hover; `—` when it was not kept. */
function payload(value: unknown): HTMLElement | string {
  if (value === undefined) return h('span', { class: 'muted' }, '—');
  const text = JSON.stringify(value) ?? 'undefined';
  return h('code', { class: 'cell', title: JSON.stringify(value, null, 2) }, text);
}

function statusBadge(status: string): HTMLElement {
  return badge(status, status === 'completed' || status === 'ok' ? 'good' : status === 'failed' || status === 'error' ? 'bad' : 'warn');
}

function outcomeBadge(outcome: ToolCall['outcome']): HTMLElement {
  return outcome === 'ok' ? badge('ok', 'good') : outcome === 'error' ? badge('error', 'bad') : outcome === 'denied' ? badge('denied', 'bad') : badge('awaiting approval', 'warn');
}

function approvalBadge(state: Approval['state']): HTMLElement {
  return badge(state, state === 'used' ? 'good' : state === 'refused' ? 'bad' : state === 'pending' ? 'warn' : '');
}
