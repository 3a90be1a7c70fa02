import { api } from '../api.ts';
import { ago, badge, h, mount, table } from '../h.ts';
import { patch } from '../patch.ts';
import type { View } from '../shell.ts';

interface Group {
  args: unknown;
  tenantId: string | null;
  subscribers: number;
  readSet: Record<string, string[]> | null;
  runs: number;
  unchangedRuns: number;
  lastRunAt: string | null;
  lastRunMs: number;
  resultBytes: number | null;
  lastError: string | null;
}
interface LiveStatus {
  revision: number;
  connections: number;
  subscriptions: number;
  groups: number;
  runs: number;
  unchangedRuns: number;
  reader: { wakeups?: { problem?: { code: string; message?: string } | null } } & Record<string, unknown>;
  liveQueries: Array<{ name: string; groups: number; subscriptions: number; reads: string[]; preciseGroups: number; groupList: Group[] }>;
}

export const liveView: View = {
  id: 'live',
  title: 'Live',
  render(container) {
    const box = h('div', null, h('p', { class: 'empty' }, 'Loading…'));
    mount(container, box);
    return {
      async refresh() {
        const s = await api<LiveStatus>('/_fw/live/status');
        const problem = s.reader.wakeups?.problem;
        patch(
          box,
          problem ? h('p', { class: 'result error' }, badge(problem.code, 'bad'), ' ', problem.message ?? 'Live updates are only polled.') : null,
          h('div', { class: 'stats' }, stat('Connections', s.connections), stat('Subscriptions', s.subscriptions), stat('Groups', s.groups), stat('Reruns', s.runs), stat('Unchanged reruns', s.unchangedRuns), stat('Log revision', s.revision)),
          s.liveQueries.length === 0 ? h('p', { class: 'empty' }, 'No live query has subscribers right now. Open a page of the app that uses one.') : null,
          s.liveQueries.map((q) =>
            h(
              'article',
              { class: 'card', 'aria-label': `liveQuery ${q.name}`, 'data-key': q.name },
              h('header', { class: 'card-head' }, h('h2', null, q.name), badge(plural(q.subscriptions, 'subscription')), badge(plural(q.groups, 'group')), q.preciseGroups === q.groups ? badge('precise', 'good') : badge(`${plural(q.groups - q.preciseGroups, 'group')} rerun on any write`, 'warn')),
              h('p', { class: 'hint' }, 'Reads ', q.reads.length ? q.reads.map((t, i) => [i ? ', ' : '', h('code', null, t)]) : '—'),
              table(
                `Groups of ${q.name}`,
                [
                  ['Args', (g) => h('code', { class: 'cell', title: JSON.stringify(g.args) }, JSON.stringify(g.args))],
                  ['Tenant', (g) => (g.tenantId ? h('code', { class: 'cell', title: g.tenantId }, g.tenantId.slice(0, 8) + '…') : '—')],
                  ['Subscribers', (g) => g.subscribers],
                  ['Read set', (g) => (g.readSet ? Object.entries(g.readSet).map(([t, c]) => h('div', null, h('code', null, t), ': ', c.join(' or '))) : h('span', { class: 'muted' }, 'not run yet'))],
                  ['Reruns', (g) => `${g.runs} (${g.unchangedRuns} unchanged)`],
                  ['Last run', (g) => (g.lastRunAt ? [h('span', { title: g.lastRunAt }, ago(g.lastRunAt)), h('div', { class: 'muted' }, `${g.lastRunMs} ms`)] : '—')],
                  ['Result', (g) => [g.resultBytes === null ? '—' : bytes(g.resultBytes), g.lastError ? [' ', badge(g.lastError, 'bad')] : null]],
                ],
                q.groupList,
                'No group.',
              ),
            ),
          ),
        );
      },
    };
  },
};

export function stat(label: string, value: string | number): HTMLElement {
  return h('div', { class: 'stat' }, h('div', { class: 'value' }, String(value)), h('div', { class: 'label' }, label));
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function bytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}
