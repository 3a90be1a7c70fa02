import { api, ApiError } from '../api.ts';
import { ago, h, mount, table } from '../h.ts';
import { patch } from '../patch.ts';
import type { View } from '../shell.ts';
import { httpBadge, outcomeBadge, type TraceDetail, traceView, type TraceSummary, who } from './trace.ts';

const PAGE = 25;
type Filter = 'all' | 'errors' | '4xx' | '5xx';
const FILTERS: Array<[Filter, string]> = [['all', 'All'], ['errors', 'Errors'], ['4xx', '4xx'], ['5xx', '5xx']];
const SHOW_BACKGROUND = 'fw.dashboard.requests.background';

function matchesFilter(t: TraceSummary, filter: Filter): boolean {
  if (filter === 'all') return true;
  if (t.outcome !== 'failed') return false;
  if (filter === 'errors') return true;
  const status = t.status ?? 500;
  return filter === '4xx' ? status >= 400 && status < 500 : status >= 500;
}

export const requestsView: View = {
  id: 'requests',
  title: 'Requests',
  render(container, context) {
    let selected = context.param;
    let traces: TraceSummary[] = [];
    let detail: TraceDetail | undefined;
    let missing = false;
    let limit = PAGE;
    let filter: Filter = 'all';
    let background = sessionStorage.getItem(SHOW_BACKGROUND) === '1';
    const expanded = new Set<string>();
    const search = h('input', { type: 'search', placeholder: 'Filter by route, entry, code or trace id', 'aria-label': 'Filter requests', class: 'grow' });
    const filters = h('div', { class: 'tabs segmented', role: 'group', 'aria-label': 'Outcome' });
    const backgroundBox = h('input', { type: 'checkbox', id: 'show-background', checked: background });
    const listBox = h('div');
    const detailBox = h('div');
    const count = h('span', { class: 'hint', 'data-testid': 'requests-count' });
    mount(
      container,
      h('div', { class: 'toolbar' }, search, filters, h('label', { class: 'check', for: 'show-background' }, backgroundBox, 'Live streams, reruns, health'), count),
      detailBox,
      listBox,
    );
    const renderFilters = () =>
      patch(
        filters,
        FILTERS.map(([f, label]) =>
          h('button', { type: 'button', 'aria-pressed': String(f === filter), 'data-key': f, on: { click: () => { filter = f; limit = PAGE; renderFilters(); renderList(); } } }, label),
        ),
      );
    renderFilters();
    search.addEventListener('input', () => {
      limit = PAGE;
      renderList();
    });
    backgroundBox.addEventListener('change', () => {
      background = backgroundBox.checked;
      sessionStorage.setItem(SHOW_BACKGROUND, background ? '1' : '0');
      limit = PAGE;
      renderList();
    });

    const renderList = () => {
      const q = search.value.trim().toLowerCase();
      const matching = traces.filter(
        (t) =>
          (background || !t.background) &&
          matchesFilter(t, filter) &&
          (!q || t.traceId.includes(q) || t.label.toLowerCase().includes(q) || (t.entry ?? '').toLowerCase().includes(q) || (t.code ?? '').includes(q)),
      );
      const shown = matching.slice(0, limit);
      const hidden = background ? 0 : traces.filter((t) => t.background).length;
      count.textContent = `${matching.length} of ${traces.length} kept${hidden ? ` · ${hidden} background hidden` : ''}`;
      patch(
        listBox,
        table(
          'Recent requests',
          [
            [
              'Request',
              (t) =>
                h('a', { href: `#/requests/${t.traceId}`, class: 'mono clip wide', title: t.message ? `${t.label}\n${t.code}: ${t.message}` : t.label, 'aria-current': t.traceId === selected ? 'true' : null }, t.label),
            ],
            // The HTTP status of a request (none for a dashboard run, which answers 200 whatever the entry did, nor for a delivery).
            ['HTTP', (t) => httpBadge(t.httpStatus)],
            // fw's own outcome: ok, the error code, or a workflow that waits (neutral: waiting is not failing).
            ['Outcome', (t) => outcomeBadge(t)],
            ['Caller', (t) => h('span', { class: 'clip', title: t.caller ? `${who(t)}\n${JSON.stringify(t.caller)}` : '' }, who(t))],
            ['Entry', (t) => (t.entry ? h('code', null, t.entry) : '—')],
            ['Duration', (t) => h('span', { class: 'nowrap', title: `${t.spanCount} spans` }, `${t.durationMs.toFixed(1)} ms`)],
            ['When', (t) => h('span', { class: 'nowrap', title: new Date(t.start).toISOString() }, ago(t.start))],
          ],
          shown,
          traces.length === 0 ? 'No request yet. Call an entry (the Functions view runs one) and it appears here.' : 'No request matches.',
          { rowClass: (t) => (t.traceId === selected ? 'selected' : ''), nowrap: true, key: (t) => t.traceId },
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
      if (!detail || detail.traceId !== selected) {
        return patch(detailBox, h('p', { class: 'empty' }, missing ? `Trace ${selected} is not among the traces kept in memory.` : 'Loading the trace…'));
      }
      patch(
        detailBox,
        traceView(detail, {
          expanded,
          toggle: (spanId) => {
            if (!expanded.delete(spanId)) expanded.add(spanId);
            renderDetail();
          },
          policies: context.policies(),
          close: () => context.navigate('#/requests'),
          runAgain: (entry, args) => {
            sessionStorage.setItem(`fw.dashboard.draft.${entry}`, args);
            context.navigate(`#/functions/${encodeURIComponent(entry)}`);
          },
        }),
      );
    };

    const loadDetail = async () => {
      if (!selected) return;
      const wanted = selected;
      try {
        const { trace } = await api<{ trace: TraceDetail }>(`/_fw/dashboard/api/traces/${encodeURIComponent(wanted)}`);
        if (wanted !== selected) return;
        detail = trace;
        missing = false;
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 404)) throw error;
        if (wanted === selected) missing = true;
      }
    };

    return {
      async refresh() {
        const [{ traces: fresh }] = await Promise.all([api<{ traces: TraceSummary[] }>('/_fw/dashboard/api/traces'), loadDetail()]);
        traces = fresh;
        renderList();
        renderDetail();
      },
      onParam(param) {
        selected = param;
        detail = undefined;
        missing = false;
        expanded.clear();
        renderList();
        renderDetail();
        // The opened trace is above the list: bring it into sight, and the keyboard's focus with it.
        void loadDetail().catch(() => {}).then(() => {
          renderDetail();
          const heading = detailBox.querySelector<HTMLElement>('#trace-title');
          if (heading && selected === param) {
            heading.focus({ preventScroll: true });
            detailBox.scrollIntoView({ block: 'start' });
          }
        });
      },
    };
  },
};
