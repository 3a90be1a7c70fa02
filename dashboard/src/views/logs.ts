import { api } from '../api.ts';
import { badge, h, mount } from '../h.ts';
import { patch } from '../patch.ts';
import type { View } from '../shell.ts';

interface LogLine {
  seq: number;
  at: number;
  level: 'log' | 'info' | 'warn' | 'error' | 'debug';
  text: string;
  traceId: string | null;
  /** One line per failed execution (a 4xx or 5xx answer, a failed delivery), noted by fw dev. */
  failure?: true;
}

const KEEP = 500;

/** The line without its trace id (and the "trace" word or brackets around it) when the "request →" link carries it. */
function withoutTrace(text: string, traceId: string): string {
  return text
    .replace(` [trace ${traceId}]`, '')
    .replace(`, trace ${traceId})`, ')')
    .replace(` (trace ${traceId})`, '');
}

export const logsView: View = {
  id: 'logs',
  title: 'Logs',
  render(container) {
    const lines: LogLine[] = [];
    let since = 0;
    const search = h('input', { type: 'search', placeholder: 'Filter lines or trace id', 'aria-label': 'Filter logs', style: 'width:min(420px,100%)' });
    const level = h(
      'select',
      { 'aria-label': 'Level' },
      h('option', { value: '' }, 'all levels'),
      h('option', { value: 'warn' }, 'warnings and errors'),
      h('option', { value: 'error' }, 'errors'),
      h('option', { value: 'failures' }, 'failed executions'),
    );
    const box = h('div', { class: 'log', role: 'log', 'aria-label': 'Log lines', tabindex: 0 });
    mount(container, h('div', { class: 'toolbar' }, search, level), box);
    const render = () => {
      const q = search.value.trim().toLowerCase();
      const min = level.value === 'error' ? ['error'] : level.value === 'warn' ? ['warn', 'error'] : null;
      const shown = lines.filter((l) => (!min || min.includes(l.level)) && (level.value !== 'failures' || l.failure) && (!q || l.text.toLowerCase().includes(q) || l.traceId?.includes(q)));
      const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
      patch(
        box,
        shown.length === 0 ? h('p', { class: 'empty' }, lines.length === 0 ? 'Nothing logged yet.' : 'No line matches.') : null,
        shown.map((l) =>
          h(
            'div',
            { class: `log-line ${l.level}${l.failure ? ' failure' : ''}`, 'data-key': String(l.seq) },
            h('time', { datetime: new Date(l.at).toISOString() }, new Date(l.at).toLocaleTimeString()),
            // A fixed-width level column: the colour is on the badge, the line stays readable.
            h('span', { class: 'log-level' }, badge(l.level === 'log' ? 'info' : l.level, l.level === 'error' ? 'bad' : l.level === 'warn' ? 'warn' : '')),
            h('span', { class: 'log-text' }, l.traceId ? withoutTrace(l.text, l.traceId) : l.text),
            l.traceId ? h('a', { href: `#/requests/${l.traceId}`, class: 'log-trace', 'aria-label': `Request of trace ${l.traceId}` }, 'request →') : null,
          ),
        ),
      );
      if (atBottom) box.scrollTop = box.scrollHeight;
    };
    search.addEventListener('input', render);
    level.addEventListener('change', render);
    return {
      async refresh() {
        const fresh = (await api<{ lines: LogLine[] }>(`/_fw/dashboard/api/logs?since=${since}`)).lines;
        if (fresh.length === 0 && since > 0) return;
        lines.push(...fresh);
        if (lines.length > KEEP) lines.splice(0, lines.length - KEEP);
        since = lines.at(-1)?.seq ?? since;
        render();
      },
    };
  },
};
