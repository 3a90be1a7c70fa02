import { api, ApiError } from '../api.ts';
import { ago, badge, h, mount, table } from '../h.ts';
import type { View } from '../shell.ts';
import { stat } from './live.ts';

interface Overview {
  counts: { pending: number; delivered: number; dead: number };
  leased: number;
}
interface Row {
  id: string;
  event: string;
  status: string;
  attempts: number;
  lastError: string | null;
  createdAt: string;
  availableAt: string;
  deadAt: string | null;
  leased: boolean;
  traceId: string | null;
  tenantId: string | null;
}
interface Run {
  runId: string;
  workflow: string;
  status: string;
  attempts: number;
  lastError: string | null;
  cancelRequested: boolean;
  traceId: string | null;
  createdAt: string;
  finishedAt: string | null;
}

type Filter = 'pending' | 'failed' | 'dead';

export const outboxView: View = {
  id: 'outbox',
  title: 'Outbox & workflows',
  render(container, context) {
    let filter: Filter = 'dead';
    const stats = h('div', { class: 'stats' });
    const rowsBox = h('div');
    const runsBox = h('div');
    const runBox = h('div');
    const notice = h('p', { class: 'hint', role: 'status', 'aria-live': 'polite' });
    const tabs = h('div', { class: 'tabs', role: 'group', 'aria-label': 'Outbox rows' });
    const renderTabs = () =>
      mount(
        tabs,
        (['pending', 'failed', 'dead'] as const).map((f) =>
          h('button', { type: 'button', 'aria-pressed': String(f === filter), on: { click: () => { filter = f; renderTabs(); void loadRows(); } } }, f === 'dead' ? 'Dead-lettered' : f === 'failed' ? 'Failed, retrying' : 'Pending'),
        ),
      );
    renderTabs();
    mount(
      container,
      stats,
      h('article', { class: 'card', 'aria-labelledby': 'outbox-title' }, h('h2', { id: 'outbox-title' }, 'Outbox'), h('p', { class: 'hint' }, 'Events emitted by commands, waiting for their actions. Retry makes a row deliverable now; discard deletes it.'), tabs, notice, rowsBox),
      h('article', { class: 'card', 'aria-labelledby': 'runs-title' }, h('h2', { id: 'runs-title' }, 'Workflow runs'), h('div', { style: 'margin-top:12px' }, runsBox), runBox),
    );

    const act = async (row: Row, what: 'retry' | 'discard') => {
      if (what === 'discard' && !confirm(`Discard outbox row ${row.id} (${row.event})? Its actions will never run.`)) return;
      try {
        await api(`/_fw/dashboard/api/outbox/${row.id}/${what}`, { method: 'POST', body: {} });
        notice.textContent = `${what === 'retry' ? 'Retried' : 'Discarded'} row ${row.id}.`;
      } catch (error) {
        notice.textContent = error instanceof ApiError ? `${error.code}: ${error.message}` : String(error);
      }
      await loadRows();
    };

    const loadRows = async () => {
      const { rows } = await api<{ rows: Row[] }>(`/_fw/dashboard/api/outbox?status=${filter}`);
      mount(
        rowsBox,
        table(
          `Outbox rows (${filter})`,
          [
            ['#', (r) => r.id],
            ['Event', (r) => h('code', null, r.event)],
            ['Status', (r) => [badge(r.status, r.status === 'dead' ? 'bad' : r.lastError ? 'warn' : ''), r.leased ? [' ', badge('delivering')] : null]],
            ['Attempts', (r) => r.attempts],
            ['Last error', (r) => (r.lastError ? h('span', { class: 'cell', title: r.lastError }, r.lastError) : '—')],
            ['Created', (r) => h('span', { title: r.createdAt }, ago(r.createdAt))],
            ['Trace', (r) => (r.traceId ? h('a', { href: `#/requests/${r.traceId}` }, r.traceId.slice(0, 8)) : '—')],
            [
              'Actions',
              (r) =>
                h(
                  'div',
                  { class: 'actions', style: 'margin:0' },
                  h('button', { type: 'button', disabled: r.leased, 'aria-label': `Retry row ${r.id}`, on: { click: () => void act(r, 'retry') } }, 'Retry'),
                  h('button', { type: 'button', class: 'danger', disabled: r.leased, 'aria-label': `Discard row ${r.id}`, on: { click: () => void act(r, 'discard') } }, 'Discard'),
                ),
            ],
          ],
          rows,
          filter === 'dead' ? 'No dead-lettered rows.' : filter === 'failed' ? 'No row is retrying after a failure.' : 'Nothing waiting.',
        ),
      );
    };

    const loadRun = async (runId: string) => {
      if (!runId) return mount(runBox);
      try {
        const run = await api<Run & { steps: Array<{ name: string; attempt: number; durationMs: number; finishedAt: string }> }>(`/_fw/workflows/${encodeURIComponent(runId)}`);
        const final = ['completed', 'failed', 'cancelled'].includes(run.status);
        mount(
          runBox,
          h(
            'section',
            { class: 'card', style: 'margin:16px 0 0', 'aria-label': `Workflow run ${run.runId}` },
            h('header', { class: 'card-head' }, h('h3', { class: 'plain' }, h('code', null, run.workflow), ' run ', h('code', { class: 'muted' }, run.runId)), statusBadge(run.status)),
            run.lastError ? h('p', { class: 'result error' }, run.lastError) : null,
            run.cancelRequested && !final ? h('p', { class: 'hint' }, 'Cancel requested: the run stops before its next step.') : null,
            table('Steps', [['Step', (s) => h('code', null, s.name)], ['Attempt', (s) => s.attempt], ['Duration', (s) => `${s.durationMs} ms`], ['Finished', (s) => ago(s.finishedAt)]], run.steps, 'No step finished yet.'),
            h(
              'div',
              { class: 'actions' },
              h('button', { type: 'button', class: 'danger', disabled: final || run.cancelRequested, on: { click: () => void cancel(run.runId) } }, 'Cancel run'),
              h('button', { type: 'button', on: { click: () => context.navigate('#/outbox') } }, 'Close'),
            ),
          ),
        );
      } catch (error) {
        mount(runBox, h('p', { class: 'result error' }, (error as Error).message));
      }
    };

    const cancel = async (runId: string) => {
      if (!confirm(`Cancel workflow run ${runId}?`)) return;
      try {
        await api(`/_fw/workflows/${runId}/cancel`, { method: 'POST', body: {} });
      } catch (error) {
        notice.textContent = (error as Error).message;
      }
      await loadRun(runId);
    };

    let selectedRun = context.param;
    return {
      async refresh() {
        const [overview, { runs }] = await Promise.all([api<Overview>('/_fw/outbox'), api<{ runs: Run[] }>('/_fw/workflows?limit=50')]);
        mount(stats, stat('Pending', overview.counts.pending), stat('Delivering', overview.leased), stat('Delivered', overview.counts.delivered), stat('Dead-lettered', overview.counts.dead), stat('Workflow runs', runs.length));
        await loadRows();
        mount(
          runsBox,
          table(
            'Workflow runs',
            [
              ['Run', (r) => h('a', { href: `#/outbox/${r.runId}` }, r.runId.slice(0, 8))],
              ['Workflow', (r) => h('code', null, r.workflow)],
              ['Status', (r) => statusBadge(r.status)],
              ['Attempts', (r) => r.attempts],
              ['Error', (r) => (r.lastError ? h('span', { class: 'cell', title: r.lastError }, r.lastError) : '—')],
              ['Started', (r) => h('span', { title: r.createdAt }, ago(r.createdAt))],
              ['Trace', (r) => (r.traceId ? h('a', { href: `#/requests/${r.traceId}` }, r.traceId.slice(0, 8)) : '—')],
            ],
            runs,
            'No workflow has run yet.',
            { rowClass: (r) => (r.runId === selectedRun ? 'selected' : '') },
          ),
        );
        if (selectedRun && !runBox.contains(document.activeElement)) await loadRun(selectedRun);
      },
      onParam(param) {
        selectedRun = param;
        void loadRun(param);
      },
    };
  },
};

function statusBadge(status: string): HTMLElement {
  return badge(status, status === 'completed' ? 'good' : status === 'failed' ? 'bad' : status === 'cancelled' ? '' : 'warn');
}
