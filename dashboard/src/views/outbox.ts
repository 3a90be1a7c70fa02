import { api, ApiError } from '../api.ts';
import { ago, badge, h, mount, table, time, when } from '../h.ts';
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
/** What a sleeping run waits for (`fw workflows show`). */
type WaitingFor = { kind: 'sleep'; step: string; until: string } | { kind: 'event'; step: string; event: string; match: Record<string, unknown>; until: string | null };
interface Run {
  runId: string;
  workflow: string;
  status: string;
  attempts: number;
  lastError: string | null;
  cancelRequested: boolean;
  waitingFor: WaitingFor | null;
  traceId: string | null;
  createdAt: string;
  finishedAt: string | null;
}
/** A scheduled call (`GET /_fw/schedule`, `fw schedule list`). */
interface Call {
  id: string;
  entry: string;
  cron: string | null;
  status: string;
  runAt: string;
  attempts: number;
  tenantId: string | null;
  userId: string | null;
  traceId: string | null;
  lastError: string | null;
}
/** A cron of src/crons.ts with its next tick (`fw inspect crons`). */
interface Cron {
  name: string;
  call: string;
  schedule: string;
  tenant: string | null;
  nextRun: string | null;
}

type Filter = 'pending' | 'failed' | 'dead';
type CallFilter = 'pending' | 'running' | 'dead' | 'cancelled' | 'delivered';
const CALL_FILTERS: Array<[CallFilter, string]> = [['pending', 'Waiting'], ['running', 'Running'], ['delivered', 'Done'], ['dead', 'Dead'], ['cancelled', 'Cancelled']];
/** Rows each list asks for at first, and more with each "Show more", up to `MAX_ROWS` (the dashboard API's cap). */
const PAGE = 50;
const MAX_ROWS = 500;

export const outboxView: View = {
  id: 'outbox',
  title: 'Outbox & workflows',
  render(container, context) {
    let filter: Filter = 'dead';
    let callFilter: CallFilter = 'pending';
    // How many of each list are shown; a tab starts again at one page.
    let rowsLimit = PAGE;
    let callsLimit = PAGE;
    let runsLimit = PAGE;
    const stats = h('div', { class: 'stats' });
    const rowsBox = h('div');
    const callsBox = h('div');
    const cronsBox = h('div');
    const runsBox = h('div');
    const runBox = h('div');
    const notice = h('p', { class: 'hint', role: 'status', 'aria-live': 'polite' });
    const callNotice = h('p', { class: 'hint', role: 'status', 'aria-live': 'polite' });
    const runNotice = h('p', { class: 'hint', role: 'status', 'aria-live': 'polite' });
    const tabs = h('div', { class: 'tabs', role: 'group', 'aria-label': 'Outbox rows' });
    const callTabs = h('div', { class: 'tabs', role: 'group', 'aria-label': 'Scheduled calls' });
    // The counts the overview gives (none for the rows being retried: they are among the pending).
    let counts: { pending: number; dead: number } | undefined;
    const renderTabs = () => {
      const label = (f: Filter) => (f === 'dead' ? 'Dead-lettered' : f === 'failed' ? 'Retrying' : 'Pending');
      const count = (f: Filter) => (counts && f !== 'failed' ? ` (${counts[f]})` : '');
      mount(
        tabs,
        (['pending', 'failed', 'dead'] as const).map((f) =>
          h('button', { type: 'button', 'aria-pressed': String(f === filter), on: { click: () => { filter = f; rowsLimit = PAGE; renderTabs(); void loadRows(); } } }, label(f), count(f)),
        ),
      );
      mount(
        callTabs,
        CALL_FILTERS.map(([f, label]) => h('button', { type: 'button', 'aria-pressed': String(f === callFilter), on: { click: () => { callFilter = f; callsLimit = PAGE; renderTabs(); void loadCalls(); } } }, label)),
      );
    };
    renderTabs();
    mount(
      container,
      stats,
      h('article', { class: 'card', 'aria-labelledby': 'outbox-title' }, h('h2', { id: 'outbox-title' }, 'Outbox'), h('p', { class: 'hint' }, 'Events emitted by commands, waiting for their actions. Retry makes a row deliverable now; discard deletes it.'), tabs, notice, rowsBox),
      h(
        'article',
        { class: 'card', 'aria-labelledby': 'calls-title' },
        h('h2', { id: 'calls-title' }, 'Scheduled calls'),
        h('p', { class: 'hint' }, 'Commands and actions called later (ctx.scheduler.runAfter, runAt) and the crons’ next ticks, each as the caller who scheduled it. Cancel stops a call that has not started (as fw schedule cancel does).'),
        callTabs,
        callNotice,
        callsBox,
        h('h3', { id: 'crons-title' }, 'Crons'),
        cronsBox,
      ),
      h('article', { class: 'card', 'aria-labelledby': 'runs-title' }, h('h2', { id: 'runs-title' }, 'Workflow runs'), runNotice, runsBox, runBox),
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
      const { rows } = await api<{ rows: Row[] }>(`/_fw/dashboard/api/outbox?status=${filter}&limit=${rowsLimit}`);
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
                  { class: 'actions' },
                  h('button', { type: 'button', disabled: r.leased, 'aria-label': `Retry row ${r.id}`, on: { click: () => void act(r, 'retry') } }, 'Retry'),
                  h('button', { type: 'button', class: 'danger', disabled: r.leased, 'aria-label': `Discard row ${r.id}`, on: { click: () => void act(r, 'discard') } }, 'Discard'),
                ),
            ],
          ],
          rows,
          filter === 'dead' ? 'No dead-lettered rows.' : filter === 'failed' ? 'No row is retrying after a failure.' : 'Nothing waiting.',
          { nowrap: true },
        ),
        pager(rows.length, rowsLimit, 'outbox rows', 'select … from _fw_outbox', () => {
          rowsLimit += PAGE;
          void loadRows();
        }),
      );
    };

    const cancelCall = async (call: Call) => {
      if (!confirm(`Cancel the scheduled call of ${call.entry} (${call.id})? It will not run.`)) return;
      try {
        await api(`/_fw/dashboard/api/schedule/${encodeURIComponent(call.id)}/cancel`, { method: 'POST', body: {} });
        callNotice.textContent = `Cancelled the call of ${call.entry} (${call.id.slice(0, 8)}).`;
      } catch (error) {
        callNotice.textContent = error instanceof ApiError ? `${error.code}: ${error.message}` : String(error);
      }
      await loadCalls();
    };

    const loadCalls = async () => {
      const { calls } = await api<{ calls: Call[] }>(`/_fw/schedule?status=${callFilter}&limit=${callsLimit}`);
      mount(
        callsBox,
        table(
          `Scheduled calls (${callFilter})`,
          [
            ['Call', (c) => [h('code', null, c.entry), c.cron ? [' ', badge(`cron ${c.cron}`)] : null]],
            ['Runs at', (c) => time(c.runAt)],
            ['Attempts', (c) => c.attempts],
            ['As', (c) => caller(c.userId, c.tenantId)],
            ['State', (c) => [callBadge(c.status), c.lastError && c.status !== 'cancelled' ? h('span', { class: 'cell muted', title: c.lastError }, c.lastError) : null]],
            ['Trace', (c) => (c.traceId ? h('a', { href: `#/requests/${c.traceId}` }, c.traceId.slice(0, 8)) : '—')],
            [
              'Actions',
              (c) =>
                c.cron
                  ? h('span', { class: 'muted', title: 'A cron’s next tick: change or remove the cron in src/crons.ts.' }, 'src/crons.ts')
                  : c.status === 'pending' || c.status === 'running'
                    ? h('button', { type: 'button', class: 'danger', disabled: c.status === 'running', title: c.status === 'running' ? 'A worker runs it now.' : null, 'aria-label': `Cancel call ${c.entry} ${c.id.slice(0, 8)}`, on: { click: () => void cancelCall(c) } }, 'Cancel')
                    : '—',
            ],
          ],
          calls,
          callFilter === 'pending' ? 'No call waiting. ctx.scheduler.runAfter and runAt add them; crons add their next tick.' : `No ${CALL_FILTERS.find(([f]) => f === callFilter)![1].toLowerCase()} call.`,
          { nowrap: true },
        ),
        pager(calls.length, callsLimit, 'scheduled calls', 'fw schedule list --limit 1000', () => {
          callsLimit += PAGE;
          void loadCalls();
        }),
      );
    };

    const loadCrons = async () => {
      const { crons } = await api<{ crons: Cron[] }>('/_fw/dashboard/api/crons');
      mount(
        cronsBox,
        table(
          'Crons',
          [
            ['Cron', (c) => h('code', null, c.name)],
            ['Schedule', (c) => h('code', null, c.schedule)],
            ['Calls', (c) => h('code', null, c.call)],
            ['Tenant', (c) => (c.tenant ? h('code', { title: c.tenant }, `${c.tenant.slice(0, 8)}…`) : h('span', { class: 'muted' }, 'none'))],
            ['Next run', (c) => time(c.nextRun)],
          ],
          crons,
          'No crons. Declare them in src/crons.ts.',
          { nowrap: true },
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
            { class: 'card nested', 'aria-label': `Workflow run ${run.runId}` },
            h('header', { class: 'card-head' }, h('h3', { class: 'plain' }, h('code', null, run.workflow), ' run ', h('code', { class: 'muted' }, run.runId)), statusBadge(run.status)),
            run.lastError ? h('p', { class: 'result error' }, run.lastError) : null,
            run.waitingFor && !final ? h('p', { class: 'callout', 'data-testid': 'run-wait' }, waitText(run.waitingFor)) : null,
            run.cancelRequested && !final ? h('p', { class: 'hint' }, 'Cancel requested: the run stops before its next step.') : null,
            table('Steps', [['Step', (s) => h('code', null, s.name)], ['Attempt', (s) => s.attempt], ['Duration', (s) => `${s.durationMs} ms`], ['Finished', (s) => ago(s.finishedAt)]], run.steps, 'No step finished yet.', { nowrap: true }),
            h(
              'div',
              { class: 'actions' },
              h('button', { type: 'button', class: 'danger', disabled: final || run.cancelRequested, on: { click: () => void cancelRun(run) } }, 'Cancel run'),
              h('button', { type: 'button', on: { click: () => context.navigate('#/outbox') } }, 'Close'),
            ),
          ),
        );
      } catch (error) {
        mount(runBox, h('p', { class: 'result error' }, (error as Error).message));
      }
    };

    const cancelRun = async (run: Run) => {
      if (!confirm(`Cancel workflow run ${run.runId} (${run.workflow})?`)) return;
      try {
        const result = await api<{ status: string }>(`/_fw/dashboard/api/workflows/${encodeURIComponent(run.runId)}/cancel`, { method: 'POST', body: {} });
        runNotice.textContent = result.status === 'cancelled' ? `Cancelled run ${run.runId.slice(0, 8)} of ${run.workflow}.` : `Run ${run.runId.slice(0, 8)} of ${run.workflow} is running: it stops before its next step.`;
      } catch (error) {
        runNotice.textContent = error instanceof ApiError ? `${error.code}: ${error.message}` : String(error);
      }
      await loadRun(run.runId);
    };

    let selectedRun = context.param;
    const view = {
      async refresh() {
        const [overview, { runs }] = await Promise.all([api<Overview>('/_fw/outbox'), api<{ runs: Run[] }>(`/_fw/workflows?limit=${runsLimit}`), loadRows(), loadCalls(), loadCrons()]);
        if (!counts || counts.pending !== overview.counts.pending || counts.dead !== overview.counts.dead) {
          counts = { pending: overview.counts.pending, dead: overview.counts.dead };
          if (!tabs.contains(document.activeElement) && !callTabs.contains(document.activeElement)) renderTabs();
        }
        mount(stats, stat('Pending', overview.counts.pending), stat('Delivering', overview.leased), stat('Delivered', overview.counts.delivered), stat('Dead-lettered', overview.counts.dead), stat('Workflow runs', runs.length < runsLimit ? runs.length : `${runs.length}+`));
        mount(
          runsBox,
          table(
            'Workflow runs',
            [
              ['Run', (r) => h('a', { href: `#/outbox/${r.runId}`, 'aria-label': `Run ${r.runId.slice(0, 8)} of ${r.workflow}` }, r.runId.slice(0, 8))],
              ['Workflow', (r) => h('code', null, r.workflow)],
              ['Status', (r) => [statusBadge(r.status), r.cancelRequested && !['completed', 'failed', 'cancelled'].includes(r.status) ? [' ', badge('cancelling')] : null]],
              ['Waits for', (r) => (r.waitingFor && r.status === 'sleeping' ? waitShort(r.waitingFor) : '—')],
              ['Attempts', (r) => r.attempts],
              ['Error', (r) => (r.lastError ? h('span', { class: 'cell', title: r.lastError }, r.lastError) : '—')],
              ['Started', (r) => h('span', { title: r.createdAt }, ago(r.createdAt))],
              ['Trace', (r) => (r.traceId ? h('a', { href: `#/requests/${r.traceId}` }, r.traceId.slice(0, 8)) : '—')],
            ],
            runs,
            'No workflow has run yet.',
            { rowClass: (r) => (r.runId === selectedRun ? 'selected' : ''), nowrap: true },
          ),
          pager(runs.length, runsLimit, 'workflow runs', 'fw workflows list --limit 1000', () => {
            runsLimit += PAGE;
            void view.refresh();
          }),
        );
        if (selectedRun && !runBox.contains(document.activeElement)) await loadRun(selectedRun);
      },
      onParam(param: string) {
        selectedRun = param;
        void loadRun(param);
      },
    };
    return view;
  },
};

/**
 * Under a list that came back full (there may be more): "Show more", which asks for a page more, or
 * past the API's cap where to read the rest.
 */
function pager(shown: number, limit: number, what: string, command: string, more: () => void): HTMLElement | null {
  if (shown < limit) return null;
  if (limit >= MAX_ROWS) return h('p', { class: 'hint' }, `The first ${MAX_ROWS} ${what}; for more: `, h('code', null, command), '.');
  return h('div', { class: 'pager' }, h('button', { type: 'button', 'aria-label': `Show more ${what}`, on: { click: more } }, 'Show more'), h('span', null, `${shown} shown`));
}

function statusBadge(status: string): HTMLElement {
  return badge(status, status === 'completed' ? 'good' : status === 'failed' ? 'bad' : status === 'cancelled' ? '' : 'warn');
}

function callBadge(status: string): HTMLElement {
  return badge(status, status === 'delivered' ? 'good' : status === 'dead' ? 'bad' : status === 'cancelled' ? '' : 'warn');
}

/** Who a call runs as: `dash · tenant 3f2a…`, or the system (a cron's tick). */
function caller(userId: string | null, tenantId: string | null): HTMLElement {
  const tenant = tenantId ? `tenant ${tenantId.slice(0, 8)}…` : null;
  const text = [userId ?? 'system', tenant].filter(Boolean).join(' · ');
  return h('span', { title: [userId ? `user ${userId}` : 'the system (no user)', tenantId ? `tenant ${tenantId}` : 'no tenant'].join(', ') }, text);
}

/** As `fw workflows show` says it. */
function waitText(wait: WaitingFor): Array<string | HTMLElement> {
  const at = (iso: string) => `${new Date(iso).toLocaleString()} (${when(iso)})`;
  if (wait.kind === 'sleep') return ['Sleeping in step ', h('code', null, wait.step), ` until ${at(wait.until)}.`];
  const match = Object.keys(wait.match ?? {}).length > 0 ? [' matching ', h('code', null, JSON.stringify(wait.match))] : [];
  return ['Waiting in step ', h('code', null, wait.step), ' for the signal ', h('code', null, wait.event), ...match, wait.until ? `, timing out at ${at(wait.until)}.` : ', with no timeout.'];
}

/** The list's short form: `sleep · in 59 min`, `signal order.approved · times out in 2 d`. */
function waitShort(wait: WaitingFor): HTMLElement {
  if (wait.kind === 'sleep') return h('span', { title: `until ${wait.until}` }, 'sleep · ', when(wait.until));
  return h('span', { title: wait.until ? `times out at ${wait.until}` : 'no timeout' }, 'signal ', h('code', null, wait.event), wait.until ? [' · times out ', when(wait.until)] : null);
}
