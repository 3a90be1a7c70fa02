import { api } from '../api.ts';
import { ago, badge, h, json, mount, table } from '../h.ts';
import type { View } from '../shell.ts';

interface AiTraceSummary {
  traceId: string;
  kind: string;
  agent: string | null;
  status: string;
  createdAt: string;
}

export const aiView: View = {
  id: 'ai',
  title: 'AI runs',
  render(container, context) {
    let selected = context.param;
    const listBox = h('div');
    const detailBox = h('div');
    mount(container, h('p', { class: 'hint' }, 'Agent runs and ctx.ai calls this app recorded (prompts and outputs only when the app opts in).'), detailBox, listBox);
    const loadDetail = async () => {
      if (!selected) return mount(detailBox);
      const trace = await api<{ traceId: string; runs: unknown[] }>(`/_fw/ai/traces/${encodeURIComponent(selected)}`);
      mount(
        detailBox,
        h(
          'article',
          { class: 'card', 'aria-labelledby': 'ai-title' },
          h('header', { class: 'card-head' }, h('h2', { id: 'ai-title' }, 'AI trace'), h('code', { class: 'muted' }, trace.traceId), h('a', { href: `#/requests/${trace.traceId}` }, 'request →')),
          h('pre', { class: 'code', tabindex: 0, 'aria-label': 'Runs of this trace' }, json(trace.runs)),
        ),
      );
    };
    return {
      async refresh() {
        const { traces } = await api<{ traces: AiTraceSummary[] }>('/_fw/ai/traces');
        mount(
          listBox,
          table(
            'Recorded AI runs',
            [
              ['Trace', (t) => h('a', { href: `#/ai/${t.traceId}`, class: 'mono' }, t.traceId.slice(0, 12))],
              ['Kind', (t) => t.kind],
              ['Agent', (t) => (t.agent ? h('code', null, t.agent) : '—')],
              ['Status', (t) => badge(t.status, t.status === 'completed' || t.status === 'ok' ? 'good' : t.status === 'failed' || t.status === 'error' ? 'bad' : 'warn')],
              ['When', (t) => h('span', { title: t.createdAt }, ago(t.createdAt))],
            ],
            traces,
            'No AI run yet. Agents and ctx.ai calls appear here.',
            { rowClass: (t) => (t.traceId === selected ? 'selected' : '') },
          ),
        );
        if (selected && !detailBox.hasChildNodes()) await loadDetail();
      },
      onParam(param) {
        selected = param;
        void loadDetail();
      },
    };
  },
};
