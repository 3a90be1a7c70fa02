import { api, ApiError } from '../api.ts';
import { ago, badge, h, json, mount, table, time, when } from '../h.ts';
import { patch } from '../patch.ts';
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
/** A run as the dashboard's own route gives it: its steps with their outputs, its args and its result. */
interface RunDetail extends Run {
  steps: Array<{ name: string; attempt: number; durationMs: number; finishedAt: string }>;
  args: unknown;
  result: unknown;
  outputs: Record<string, unknown>;
}
/** A scheduled call (`fw schedule list`, with its args). */
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
  args?: unknown;
}
/** A cron of src/crons.ts with its next tick (`fw inspect crons`). */
interface Cron {
  name: string;
  call: string;
  schedule: string;
  tenant: string | null;
  forEachTenant?: string | null;
  nextRun: string | null;
}

type Filter = 'pending' | 'failed' | 'dead';
type CallFilter = 'pending' | 'running' | 'dead' | 'cancelled' | 'delivered';
const CALL_FILTERS: Array<[CallFilter, string]> = [['pending', 'Waiting'], ['running', 'Running'], ['delivered', 'Done'], ['dead', 'Dead'], ['cancelled', 'Cancelled']];
/** Rows each list asks for at first, and more with each "Show more", up to `MAX_ROWS` (the dashboard API's cap). */
const PAGE = 50;
const MAX_ROWS = 500;
const FINAL = ['completed', 'failed', 'cancelled'];

export const outboxView: View = {
  id: 'outbox',
  title: 'Outbox & workflows',
  render(container, context) {
    // Until the counts are known: then the first tab with rows in it (dead letters first, else what waits).
    let filter: Filter | undefined;
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
      patch(
        tabs,
        (['pending', 'failed', 'dead'] as const).map((f) =>
          h('button', { type: 'button', 'data-key': f, 'aria-pressed': String(f === filter), on: { click: () => { filter = f; rowsLimit = PAGE; renderTabs(); void loadRows(); } } }, label(f), count(f)),
        ),
      );
      patch(
        callTabs,
        CALL_FILTERS.map(([f, label]) => h('button', { type: 'button', 'data-key': f, 'aria-pressed': String(f === callFilter), on: { click: () => { callFilter = f; callsLimit = PAGE; renderTabs(); void loadCalls(); } } }, label)),
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
        h('p', { class: 'hint' }, 'Commands and actions called later (ctx.scheduler.runAfter, runAt) and the crons’ next ticks, each as the caller who scheduled it. Run now makes a call due at once (dev only); cancel stops a call that has not started (as fw schedule cancel does).'),
        callTabs,
        callNotice,
        callsBox,
        h('h3', { id: 'crons-title' }, 'Crons'),
        cronsBox,
      ),
      h('article', { class: 'card', 'aria-labelledby': 'runs-title' }, h('h2', { id: 'runs-title' }, 'Workflow runs'), runNotice, runBox, runsBox),
    );

    /** A write of the dashboard's, its outcome said in `where`; then the list it changed is read again. */
    const write = async (where: HTMLElement, path: string, body: unknown, done: (answer: any) => string, reload: () => Promise<void>) => {
      try {
        const answer = await api(path, { method: 'POST', body });
        where.textContent = done(answer);
      } catch (error) {
        where.textContent = error instanceof ApiError ? `${error.code}: ${error.message}` : String(error);
      }
      await reload();
    };

    const act = async (row: Row, what: 'retry' | 'discard') => {
      if (what === 'discard' && !confirm(`Discard outbox row ${row.id} (${row.event})? Its actions will never run.`)) return;
      await write(notice, `/_fw/dashboard/api/outbox/${row.id}/${what}`, {}, () => `${what === 'retry' ? 'Retried' : 'Discarded'} row ${row.id}.`, loadRows);
    };

    const loadRows = async () => {
      if (!filter) return;
      const shown = filter;
      const { rows } = await api<{ rows: Row[] }>(`/_fw/dashboard/api/outbox?status=${shown}&limit=${rowsLimit}`);
      patch(
        rowsBox,
        table(
          `Outbox rows (${shown})`,
          [
            ['#', (r) => r.id],
            ['Event', (r) => h('code', null, r.event)],
            ['Status', (r) => [badge(r.status, r.status === 'dead' ? 'bad' : r.lastError ? 'warn' : 'wait'), r.leased ? [' ', badge('delivering')] : null]],
            ['Attempts', (r) => r.attempts],
            ['Last error', (r) => (r.lastError ? h('span', { class: 'cell', title: r.lastError }, r.lastError) : '—')],
            ['Due', (r) => (r.status === 'pending' ? time(r.availableAt) : h('span', { title: r.createdAt }, ago(r.createdAt)))],
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
          shown === 'dead' ? 'No dead-lettered rows.' : shown === 'failed' ? 'No row is retrying after a failure.' : 'Nothing waiting.',
          { nowrap: true, key: (r) => r.id },
        ),
        pager(rows.length, rowsLimit, 'outbox rows', 'select … from _fw_outbox', () => {
          rowsLimit += PAGE;
          void loadRows();
        }),
      );
    };

    const cancelCall = async (call: Call) => {
      if (!confirm(`Cancel the scheduled call of ${call.entry} (${call.id})? It will not run.`)) return;
      await write(callNotice, `/_fw/dashboard/api/schedule/${encodeURIComponent(call.id)}/cancel`, {}, () => `Cancelled the call of ${call.entry} (${call.id.slice(0, 8)}).`, loadCalls);
    };
    const runCallNow = (call: Call) =>
      write(callNotice, `/_fw/dashboard/api/schedule/${encodeURIComponent(call.id)}/run-now`, {}, () => `The call of ${call.entry} (${call.id.slice(0, 8)}) is due now: a worker runs it next.`, loadCalls);
    const triggerCron = (cron: Cron) =>
      write(callNotice, `/_fw/dashboard/api/crons/${encodeURIComponent(cron.name)}/trigger`, {}, () => `Triggered ${cron.name}: ${cron.call} runs now${cron.forEachTenant ? ' in every tenant' : ''}; its next tick stays as it was.`, loadCalls);

    const loadCalls = async () => {
      const { calls } = await api<{ calls: Call[] }>(`/_fw/dashboard/api/schedule?status=${callFilter}&limit=${callsLimit}`);
      const dev = context.dev();
      patch(
        callsBox,
        table(
          `Scheduled calls (${callFilter})`,
          [
            ['Call', (c) => [h('code', null, c.entry), c.cron ? [' ', badge(`cron ${c.cron}`)] : null]],
            ['Args', (c) => (c.args === undefined ? '—' : h('code', { class: 'cell narrow', title: json(c.args) }, JSON.stringify(c.args)))],
            ['Runs at', (c) => time(c.runAt)],
            ['As', (c) => caller(c.userId, c.tenantId)],
            // Attempts only once there were some (a call that failed and waits to retry), with the last error.
            [
              'State',
              (c) => [
                callBadge(c.status, c.lastError),
                c.attempts > 0 && c.status !== 'delivered' ? h('span', { class: 'muted' }, ` ${c.attempts} attempt${c.attempts === 1 ? '' : 's'}`) : null,
                c.lastError && c.status !== 'cancelled' ? h('span', { class: 'cell muted', title: c.lastError }, c.lastError) : null,
              ],
            ],
            ['Trace', (c) => (c.traceId ? h('a', { href: `#/requests/${c.traceId}` }, c.traceId.slice(0, 8)) : '—')],
            [
              'Actions',
              (c) =>
                c.cron
                  ? h('span', { class: 'muted', title: 'A cron’s next tick: change or remove the cron in src/crons.ts; Trigger (below) runs it now.' }, 'src/crons.ts')
                  : c.status === 'pending' || c.status === 'running'
                    ? h(
                        'div',
                        { class: 'actions' },
                        dev ? h('button', { type: 'button', disabled: c.status === 'running', 'aria-label': `Run now: call ${c.entry} ${c.id.slice(0, 8)}`, on: { click: () => void runCallNow(c) } }, 'Run now') : null,
                        h('button', { type: 'button', class: 'danger', disabled: c.status === 'running', title: c.status === 'running' ? 'A worker runs it now.' : null, 'aria-label': `Cancel call ${c.entry} ${c.id.slice(0, 8)}`, on: { click: () => void cancelCall(c) } }, 'Cancel'),
                      )
                    : '—',
            ],
          ],
          calls,
          callFilter === 'pending' ? 'No call waiting. ctx.scheduler.runAfter and runAt add them; crons add their next tick.' : `No ${CALL_FILTERS.find(([f]) => f === callFilter)![1].toLowerCase()} call.`,
          { nowrap: true, key: (c) => c.id },
        ),
        pager(calls.length, callsLimit, 'scheduled calls', 'fw schedule list --limit 1000', () => {
          callsLimit += PAGE;
          void loadCalls();
        }),
      );
    };

    const loadCrons = async () => {
      const { crons } = await api<{ crons: Cron[] }>('/_fw/dashboard/api/crons');
      const dev = context.dev();
      patch(
        cronsBox,
        table(
          'Crons',
          [
            ['Cron', (c) => h('code', null, c.name)],
            ['Schedule', (c) => h('code', null, c.schedule)],
            ['Calls', (c) => h('code', null, c.call)],
            ['Tenant', (c) => (c.forEachTenant ? h('span', null, 'each of ', h('code', null, c.forEachTenant)) : c.tenant ? h('code', { title: c.tenant }, `${c.tenant.slice(0, 8)}…`) : h('span', { class: 'muted' }, 'none'))],
            ['Next run', (c) => time(c.nextRun)],
            ...(dev ? [['Actions', (c: Cron) => h('button', { type: 'button', 'aria-label': `Trigger now: cron ${c.name}`, on: { click: () => void triggerCron(c) } }, 'Trigger now')] as [string, (c: Cron) => HTMLElement]] : []),
          ],
          crons,
          'No crons. Declare them in src/crons.ts.',
          { nowrap: true, key: (c) => c.name },
        ),
      );
    };

    // What the developer typed as a signal's payload, kept across refreshes.
    const signalDrafts = new Map<string, string>();
    /** A run's controls for time (dev): skip its sleep, send the signal it waits for, run it again once failed. */
    const runControls = (run: RunDetail) => {
      if (!context.dev()) return null;
      const wait = run.status === 'sleeping' ? run.waitingFor : null;
      if (wait?.kind === 'sleep') {
        return h('div', { class: 'actions' }, h('button', { type: 'button', class: 'primary', on: { click: () => void control(run, 'skip-sleep', {}, () => `Skipped the sleep of run ${run.runId.slice(0, 8)}: it goes on now.`) } }, 'Skip the sleep'));
      }
      if (wait?.kind === 'event') {
        const payload = h('textarea', { id: 'signal-payload', rows: 3, spellcheck: false, class: 'code', 'aria-describedby': 'signal-hint', on: { input: (e: Event) => signalDrafts.set(run.runId, (e.target as HTMLTextAreaElement).value) } });
        payload.value = signalDrafts.get(run.runId) ?? json(wait.match ?? {});
        return h(
          'form',
          {
            class: 'signal',
            'aria-label': `Send signal ${wait.event}`,
            'data-key': `signal-${run.runId}`,
            on: {
              submit: (e: Event) => {
                e.preventDefault();
                let body: unknown;
                try {
                  body = JSON.parse((e.target as HTMLFormElement).querySelector('textarea')!.value || '{}');
                } catch (error) {
                  runNotice.textContent = `The payload is not JSON: ${(error as Error).message}`;
                  return;
                }
                void control(run, 'signal', { payload: body }, (a: { woken: string[] }) => `Sent ${wait.event}: woke ${a.woken.length} run${a.woken.length === 1 ? '' : 's'}.`);
              },
            },
          },
          h('label', { for: 'signal-payload' }, 'Payload of ', h('code', null, wait.event)),
          payload,
          h('p', { class: 'hint', id: 'signal-hint' }, 'Prefilled from what the run matches; delivered as ctx.signal would be, to every run of its tenant that waits for it.'),
          h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Send signal')),
        );
      }
      if (run.status === 'failed') {
        return h('div', { class: 'actions' }, h('button', { type: 'button', class: 'primary', on: { click: () => void control(run, 'rerun', {}, () => `Run ${run.runId.slice(0, 8)} runs again from its last finished step.`) } }, 'Run again'));
      }
      return null;
    };

    const control = (run: RunDetail, what: 'skip-sleep' | 'signal' | 'rerun', body: unknown, done: (answer: any) => string) =>
      write(runNotice, `/_fw/dashboard/api/workflows/${encodeURIComponent(run.runId)}/${what}`, body, done, () => loadRun(run.runId));

    const loadRun = async (runId: string) => {
      if (!runId) return mount(runBox);
      try {
        const run = await api<RunDetail>(`/_fw/dashboard/api/workflows/${encodeURIComponent(runId)}`);
        const final = FINAL.includes(run.status);
        patch(
          runBox,
          h(
            'section',
            { class: 'card nested', 'aria-label': `Workflow run ${run.runId}`, 'data-key': run.runId },
            h('header', { class: 'card-head' }, h('h3', { class: 'plain', id: 'run-title', tabindex: -1 }, h('code', null, run.workflow), ' run ', h('code', { class: 'muted' }, run.runId)), statusBadge(run.status)),
            run.lastError && run.status !== 'completed' ? h('p', { class: 'result error' }, run.lastError) : null,
            run.waitingFor && !final ? h('p', { class: 'callout wait', 'data-testid': 'run-wait' }, waitText(run.waitingFor)) : null,
            run.cancelRequested && !final ? h('p', { class: 'hint' }, 'Cancel requested: the run stops before its next step.') : null,
            runControls(run),
            h('div', { class: 'io' }, io('Args', run.args), run.status === 'completed' ? io('Result', run.result) : null),
            table(
              'Steps',
              [
                ['Step', (s) => h('code', null, s.name)],
                ['Output', (s) => (s.name in run.outputs ? h('code', { class: 'cell', title: json(run.outputs[s.name]) }, JSON.stringify(run.outputs[s.name])) : '—')],
                ['Attempt', (s) => s.attempt],
                ['Duration', (s) => `${s.durationMs} ms`],
                ['Finished', (s) => ago(s.finishedAt)],
              ],
              run.steps,
              'No step finished yet.',
              { nowrap: true, key: (s) => s.name },
            ),
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
      await write(
        runNotice,
        `/_fw/dashboard/api/workflows/${encodeURIComponent(run.runId)}/cancel`,
        {},
        (result: { status: string }) => (result.status === 'cancelled' ? `Cancelled run ${run.runId.slice(0, 8)} of ${run.workflow}.` : `Run ${run.runId.slice(0, 8)} of ${run.workflow} is running: it stops before its next step.`),
        () => loadRun(run.runId),
      );
    };

    let selectedRun = context.param;
    const view = {
      async refresh() {
        const overview = await api<Overview>('/_fw/outbox');
        if (!filter) {
          filter = overview.counts.dead > 0 ? 'dead' : 'pending';
          renderTabs();
        }
        const [{ runs }] = await Promise.all([api<{ runs: Run[] }>(`/_fw/workflows?limit=${runsLimit}`), loadRows(), loadCalls(), loadCrons()]);
        if (!counts || counts.pending !== overview.counts.pending || counts.dead !== overview.counts.dead) {
          counts = { pending: overview.counts.pending, dead: overview.counts.dead };
          renderTabs();
        }
        patch(stats, stat('Pending', overview.counts.pending), stat('Delivering', overview.leased), stat('Delivered', overview.counts.delivered), stat('Dead-lettered', overview.counts.dead), stat('Workflow runs', runs.length < runsLimit ? runs.length : `${runs.length}+`));
        patch(
          runsBox,
          table(
            'Workflow runs',
            [
              ['Run', (r) => h('a', { href: `#/outbox/${r.runId}`, 'aria-label': `Run ${r.runId.slice(0, 8)} of ${r.workflow}` }, r.runId.slice(0, 8))],
              ['Workflow', (r) => h('code', null, r.workflow)],
              ['Status', (r) => [statusBadge(r.status), r.cancelRequested && !FINAL.includes(r.status) ? [' ', badge('cancelling')] : null]],
              ['Waits for', (r) => (r.waitingFor && r.status === 'sleeping' ? waitShort(r.waitingFor) : '—')],
              ['Attempts', (r) => r.attempts],
              // A run that completed after failed attempts: their last error is history, not its state.
              ['Error', (r) => (r.lastError && r.status !== 'completed' ? h('span', { class: 'cell narrow', title: r.lastError }, r.lastError) : '—')],
              ['Started', (r) => h('span', { class: 'nowrap', title: r.createdAt }, ago(r.createdAt))],
              ['Trace', (r) => (r.traceId ? h('a', { href: `#/requests/${r.traceId}` }, r.traceId.slice(0, 8)) : '—')],
            ],
            runs,
            'No workflow has run yet.',
            // Not one line a row: what a run waits for may wrap, so that the table fits a laptop's width.
            { rowClass: (r) => (r.runId === selectedRun ? 'selected' : ''), key: (r) => r.runId },
          ),
          pager(runs.length, runsLimit, 'workflow runs', 'fw workflows list --limit 1000', () => {
            runsLimit += PAGE;
            void view.refresh();
          }),
        );
        if (selectedRun) await loadRun(selectedRun);
      },
      onParam(param: string) {
        selectedRun = param;
        void loadRun(param).then(() => {
          // The opened run is above the list: bring it into sight, and the keyboard's focus with it.
          const heading = runBox.querySelector<HTMLElement>('#run-title');
          if (heading && selectedRun === param) {
            heading.focus({ preventScroll: true });
            runBox.scrollIntoView({ block: 'start' });
          }
        });
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

/** A run's status; a run that sleeps or waits for a signal is `waiting`, drawn neutral: waiting is not failing. */
function statusBadge(status: string): HTMLElement {
  if (status === 'sleeping') return badge('waiting', 'wait');
  return badge(status, status === 'completed' ? 'good' : status === 'failed' ? 'bad' : status === 'retrying' ? 'warn' : status === 'cancelled' ? '' : 'wait');
}

function callBadge(status: string, lastError: string | null): HTMLElement {
  return badge(status, status === 'delivered' ? 'good' : status === 'dead' ? 'bad' : status === 'cancelled' ? '' : lastError ? 'warn' : 'wait');
}

/** Who a call runs as: `dash · tenant 3f2a…`, or the system (a cron's tick). */
function caller(userId: string | null, tenantId: string | null): HTMLElement {
  const tenant = tenantId ? `tenant ${tenantId.slice(0, 8)}…` : null;
  const text = [userId ?? 'system', tenant].filter(Boolean).join(' · ');
  return h('span', { class: 'clip narrow', title: [userId ? `user ${userId}` : 'the system (no user)', tenantId ? `tenant ${tenantId}` : 'no tenant'].join(', ') }, text);
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

function io(title: string, value: unknown): HTMLElement {
  return h('div', null, h('h4', null, title), h('pre', { class: 'code', tabindex: 0, 'aria-label': `Run ${title.toLowerCase()}` }, json(value)));
}
