import { api } from '../api.ts';
import { ago, badge, h, mount, table } from '../h.ts';
import type { View } from '../shell.ts';

interface Span {
  spanId: string;
  parentId: string | null;
  name: string;
  kind: number;
  start: number;
  durationMs: number;
  error: string | null;
  attributes: Record<string, string | number | boolean>;
}
interface Trace {
  traceId: string;
  start: number;
  spans: Span[];
  caller?: { kind: string; userId: string | null; tenantId: string | null; role: string | null };
}

/** Who made the request, shortly: `u1 · tenant 3f2a…  · admin`. */
function who(t: Trace): string {
  const c = t.caller;
  if (!c) return '—';
  if (c.kind === 'anonymous') return 'anonymous';
  return [c.userId ?? c.kind, c.tenantId ? `tenant ${c.tenantId.slice(0, 8)}…` : null, c.role].filter(Boolean).join(' · ');
}

/** The HTTP status the request answered; none for a dashboard run (200 whatever the entry did) or a delivery. */
function httpStatus(t: Trace): string | number | boolean | undefined {
  const root = rootOf(t);
  return root?.attributes['http.route'] === '/_fw/dashboard/api/*' ? undefined : root?.attributes['http.response.status_code'];
}

/** The trace's first span without a parent in it: the request (or the rerun, the delivery). */
function rootOf(trace: Trace): Span | undefined {
  const ids = new Set(trace.spans.map((s) => s.spanId));
  return trace.spans.find((s) => !s.parentId || !ids.has(s.parentId));
}

const PAGE = 25;

export const requestsView: View = {
  id: 'requests',
  title: 'Requests',
  render(container, context) {
    let selected = context.param;
    let traces: Trace[] = [];
    let limit = PAGE;
    const search = h('input', { type: 'search', placeholder: 'Filter by route, entry or trace id', 'aria-label': 'Filter requests', style: 'width:min(420px,100%)' });
    const listBox = h('div');
    const detailBox = h('div');
    mount(container, h('div', { class: 'toolbar' }, search), detailBox, listBox);
    search.addEventListener('input', () => {
      limit = PAGE;
      renderList();
    });

    /** What the trace was: the request line, or the entry a dashboard run ran. */
    const label = (t: Trace) => {
      const root = rootOf(t);
      const entry = t.spans.find((s) => s.attributes['fw.entry'] !== undefined && s.name.startsWith('fw.entry '));
      if (root?.attributes['http.route'] === '/_fw/dashboard/api/*' && entry) return `run ${entry.attributes['fw.entry']} (dashboard)`;
      return root?.name ?? t.traceId;
    };
    const failure = (t: Trace) => t.spans.find((s) => s.error)?.error ?? null;
    const renderList = () => {
      const q = search.value.trim().toLowerCase();
      const matching = traces.filter((t) => !q || t.traceId.includes(q) || label(t).toLowerCase().includes(q) || t.spans.some((s) => s.name.toLowerCase().includes(q)));
      const shown = matching.slice(0, limit);
      mount(
        listBox,
        table(
          'Recent requests',
          [
            ['Request', (t) => h('a', { href: `#/requests/${t.traceId}`, class: 'mono clip wide', title: label(t) }, label(t))],
            [
              // The HTTP status of a request (none for a dashboard run, which answers 200 whatever the entry did, nor for a delivery).
              'HTTP',
              (t) => {
                const code = httpStatus(t);
                return code !== undefined ? badge(String(code), Number(code) >= 500 ? 'bad' : Number(code) >= 400 ? 'warn' : 'good') : h('span', { class: 'muted' }, '—');
              },
            ],
            [
              // fw's own outcome: ok, or the error code (a delivery's dead or retry).
              'Outcome',
              (t) => {
                const outcome = t.spans.find((s) => s.attributes['fw.outbox.outcome'] !== undefined)?.attributes['fw.outbox.outcome'];
                const error = failure(t) ?? (outcome === 'dead' || outcome === 'retry' ? String(outcome) : null);
                return error ? badge(error, 'bad') : badge('ok', 'good');
              },
            ],
            ['Caller', (t) => h('span', { class: 'clip', title: t.caller ? `${who(t)}\n${JSON.stringify(t.caller)}` : '' }, who(t))],
            ['Entry', (t) => { const entry = t.spans.find((s) => s.attributes['fw.entry'] !== undefined); return entry ? h('code', null, String(entry.attributes['fw.entry'])) : '—'; }],
            ['Duration', (t) => h('span', { class: 'nowrap', title: `${t.spans.length} spans` }, `${(rootOf(t)?.durationMs ?? 0).toFixed(1)} ms`)],
            ['When', (t) => h('span', { class: 'nowrap', title: new Date(t.start).toISOString() }, ago(t.start))],
          ],
          shown,
          traces.length === 0 ? 'No request yet. Call an entry (the Functions view runs one) and it appears here.' : 'No request matches.',
          { rowClass: (t) => (t.traceId === selected ? 'selected' : ''), nowrap: true },
        ),
        matching.length > shown.length
          ? h(
              'div',
              { class: 'pager' },
              h('button', { type: 'button', on: { click: () => { limit += PAGE; renderList(); } } }, 'Show more'),
              h('span', { 'data-testid': 'requests-shown' }, `${shown.length} of ${matching.length}`),
            )
          : null,
      );
    };

    const renderDetail = () => {
      if (!selected) return mount(detailBox);
      const trace = traces.find((t) => t.traceId === selected);
      if (!trace) return mount(detailBox, h('p', { class: 'empty' }, `Trace ${selected} is not among the last ${traces.length} kept in memory.`));
      const start = Math.min(...trace.spans.map((s) => s.start));
      const end = Math.max(...trace.spans.map((s) => s.start + s.durationMs));
      const total = Math.max(end - start, 0.001);
      // Depth-first from the roots, children by start: each span under its parent, as a waterfall reads.
      const ids = new Set(trace.spans.map((s) => s.spanId));
      const ordered: Array<{ span: Span; depth: number }> = [];
      const visit = (span: Span, depth: number) => {
        ordered.push({ span, depth });
        for (const child of trace.spans.filter((c) => c.parentId === span.spanId)) visit(child, depth + 1);
      };
      for (const root of trace.spans.filter((s) => !s.parentId || !ids.has(s.parentId))) visit(root, 0);
      mount(
        detailBox,
        h(
          'article',
          { class: 'card', 'aria-labelledby': 'trace-title' },
          h('header', { class: 'card-head' }, h('h2', { id: 'trace-title' }, label(trace)), h('code', { class: 'muted' }, trace.traceId)),
          h('p', { class: 'hint' }, `${total.toFixed(1)} ms · ${trace.spans.length} spans · ${new Date(start).toLocaleTimeString()}`, trace.caller ? ` · by ${who(trace)}` : ''),
          h(
            'div',
            { class: 'waterfall', role: 'list', 'aria-label': 'Spans' },
            ordered.map(({ span: s, depth }) =>
              h(
                'div',
                { class: 'span-row', role: 'listitem', title: Object.entries(s.attributes).map(([k, v]) => `${k} = ${v}`).join('\n') },
                h('span', { class: 'span-name', style: `padding-left:${depth * 14}px` }, s.name, s.error ? [' ', badge(s.error, 'bad')] : null),
                h('span', { class: 'span-track' }, h('span', { class: `span-bar${s.error ? ' error' : ''}`, style: `left:${((s.start - start) / total) * 100}%;width:${(s.durationMs / total) * 100}%` })),
                h('span', { class: 'span-ms' }, `${s.durationMs.toFixed(1)} ms`),
              ),
            ),
          ),
          h('div', { class: 'actions' }, h('button', { type: 'button', on: { click: () => context.navigate('#/requests') } }, 'Close')),
        ),
      );
    };

    return {
      async refresh() {
        traces = (await api<{ traces: Trace[] }>('/_fw/dashboard/api/traces')).traces;
        renderList();
        renderDetail();
      },
      onParam(param) {
        selected = param;
        renderList();
        renderDetail();
      },
    };
  },
};
