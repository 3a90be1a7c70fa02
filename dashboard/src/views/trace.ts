import { ago, badge, h, type Child } from '../h.ts';
import type { PolicyRoles } from '../shell.ts';

/** A trace as the Requests view lists it (runtime/telemetry/recent-spans.ts). */
export interface TraceSummary {
  traceId: string;
  start: number;
  durationMs: number;
  label: string;
  kind: 'request' | 'run' | 'delivery' | 'rerun' | 'other';
  background: boolean;
  entry: string | null;
  httpStatus: number | null;
  outcome: 'ok' | 'failed' | 'waiting' | 'cancelled';
  code: string | null;
  status: number | null;
  message: string | null;
  caller?: { kind: string; userId: string | null; tenantId: string | null; role: string | null };
  spanCount: number;
  emittedBy: string | null;
}
export interface Span {
  spanId: string;
  parentId: string | null;
  name: string;
  kind: number;
  start: number;
  durationMs: number;
  error: string | null;
  attributes: Record<string, string | number | boolean>;
  sql?: string;
}
export interface TraceDetail extends TraceSummary {
  spans: Span[];
  failure: { code: string; status: number; message: string; location?: string; diagnostics?: Array<{ path: string; code: string; message: string }> } | null;
  invocations: Array<{ entry: string; kind: string; args: string | null; result?: string; error?: { code: string; message: string }; suspended?: 'wait' | 'cancelled'; durationMs: number }>;
  caused: TraceSummary[];
  logs: Array<{ seq: number; at: number; level: string; text: string }>;
}

/** Who made the request, shortly: `u1 · tenant 3f2a… · admin`. */
export function who(t: TraceSummary): string {
  const c = t.caller;
  if (!c) return '—';
  if (c.kind === 'anonymous') return 'anonymous';
  return [c.userId ?? c.kind, c.tenantId ? `tenant ${c.tenantId.slice(0, 8)}…` : null, c.role].filter(Boolean).join(' · ');
}

/** fw's outcome: ok, the failure's code, or — neutral, not red — a workflow that waits or was cancelled. */
export function outcomeBadge(t: TraceSummary): HTMLElement {
  if (t.outcome === 'failed') return badge(t.code ?? 'failed', 'bad');
  if (t.outcome === 'waiting') return badge('waiting', 'wait');
  if (t.outcome === 'cancelled') return badge('cancelled', 'wait');
  return badge('ok', 'good');
}

export function httpBadge(status: number | null): HTMLElement {
  if (status === null) return h('span', { class: 'muted' }, '—');
  return badge(String(status), status >= 500 ? 'bad' : status >= 400 ? 'warn' : 'good');
}

/** A span's state: failed, a workflow that waits (grey, not red), or fine. */
function spanState(span: Span): 'error' | 'wait' | '' {
  if (span.error) return 'error';
  const outcome = span.attributes['fw.workflow.outcome'] ?? span.attributes['fw.outbox.outcome'];
  return outcome === 'wait' || outcome === 'cancelled' ? 'wait' : '';
}

/** JSON text pretty-printed for a <pre> (as kept: cut values end in `…` and stay as they are). */
function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export interface TraceViewOptions {
  expanded: Set<string>;
  toggle(spanId: string): void;
  policies: Record<string, PolicyRoles>;
  close(): void;
  /** Opens the entry in the Functions view with these args (a request to try again). */
  runAgain?(entry: string, args: string): void;
}

/** The trace view: what failed and why at the top, then the waterfall (each span opens), the entries' args and results, its log lines, and what it set off. */
export function traceView(trace: TraceDetail, options: TraceViewOptions): HTMLElement {
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
  const entrySpan = trace.spans.find((s) => typeof s.attributes['fw.policy'] === 'string');
  const rerunnable = trace.invocations.find((i) => (i.kind === 'command' || i.kind === 'query' || i.kind === 'liveQuery') && i.args !== null);
  return h(
    'article',
    { class: 'card trace', 'aria-labelledby': 'trace-title', 'data-key': `trace-${trace.traceId}` },
    h('header', { class: 'card-head' }, h('h2', { id: 'trace-title', tabindex: -1 }, trace.label), httpBadge(trace.httpStatus), outcomeBadge(trace), h('code', { class: 'muted' }, trace.traceId)),
    h(
      'p',
      { class: 'hint' },
      `${total.toFixed(1)} ms · ${trace.spans.length} spans · ${new Date(start).toLocaleTimeString()} (${ago(start)})`,
      trace.caller ? ` · by ${who(trace)}` : '',
      trace.emittedBy ? [' · set off by ', h('a', { href: `#/requests/${trace.emittedBy}` }, `trace ${trace.emittedBy.slice(0, 8)}`)] : null,
    ),
    trace.outcome === 'failed' ? failureBox(trace, entrySpan, options.policies) : null,
    trace.outcome === 'waiting' ? h('p', { class: 'callout wait', 'data-testid': 'trace-wait' }, 'A workflow run that waits (a sleep or a signal): not a failure. The Outbox view says until when, and can wake it.') : null,
    h(
      'div',
      { class: 'waterfall', role: 'list', 'aria-label': 'Spans' },
      ordered.map(({ span: s, depth }) => {
        const open = options.expanded.has(s.spanId);
        const state = spanState(s);
        return h(
          'div',
          { role: 'listitem', class: 'span-item', 'data-key': s.spanId },
          h(
            'button',
            { type: 'button', class: 'span-row', 'aria-expanded': String(open), 'aria-controls': `span-${s.spanId}`, on: { click: () => options.toggle(s.spanId) } },
            h('span', { class: 'span-name', style: `padding-left:${depth * 14}px` }, s.name, state === 'error' ? [' ', badge(s.error!, 'bad')] : state === 'wait' ? [' ', badge('waiting', 'wait')] : null),
            h('span', { class: 'span-track', 'aria-hidden': 'true' }, h('span', { class: `span-bar ${state}`, style: `left:${((s.start - start) / total) * 100}%;width:${(s.durationMs / total) * 100}%` })),
            h('span', { class: 'span-ms' }, `${s.durationMs.toFixed(1)} ms`),
          ),
          open ? spanDetail(s) : null,
        );
      }),
    ),
    trace.invocations.length > 0
      ? [
          h('h3', null, 'Args and result'),
          trace.invocations.map((i, n) =>
            h(
              'section',
              { class: 'invocation', 'aria-label': `${i.kind} ${i.entry}`, 'data-key': `invocation-${n}` },
              h('p', { class: 'result-head' }, h('code', null, i.entry), ' ', badge(i.kind), ` ${i.durationMs.toFixed(1)} ms `, i.error ? badge(i.error.code, 'bad') : i.suspended ? badge(i.suspended === 'wait' ? 'waiting' : 'cancelled', 'wait') : badge('ok', 'good')),
              h('div', { class: 'io' }, ioBlock('Args', i.args), i.error ? h('div', null, h('h4', null, 'Error'), h('p', { class: 'io-error' }, i.error.message)) : 'result' in i ? ioBlock('Result', i.result ?? null) : null),
            ),
          ),
        ]
      : null,
    h('h3', null, 'Log lines'),
    trace.logs.length === 0
      ? h('p', { class: 'empty' }, 'No line was logged in this trace.')
      : h(
          'div',
          { class: 'log inline', role: 'log', 'aria-label': 'Log lines of this trace', tabindex: 0 },
          trace.logs.map((l) => h('div', { class: `log-line ${l.level}`, 'data-key': String(l.seq) }, h('time', { datetime: new Date(l.at).toISOString() }, new Date(l.at).toLocaleTimeString()), h('span', { class: 'log-level' }, badge(l.level === 'log' ? 'info' : l.level, l.level === 'error' ? 'bad' : l.level === 'warn' ? 'warn' : '')), h('span', { class: 'log-text' }, l.text))),
        ),
    trace.caused.length > 0
      ? [
          h('h3', null, 'What it set off'),
          h(
            'ul',
            { class: 'caused', 'aria-label': 'What it set off' },
            trace.caused.map((c) => h('li', { 'data-key': c.traceId }, h('a', { href: `#/requests/${c.traceId}`, class: 'mono' }, c.label), ' ', outcomeBadge(c), h('span', { class: 'muted' }, ` ${c.durationMs.toFixed(1)} ms · ${ago(c.start)}`))),
          ),
        ]
      : null,
    h(
      'div',
      { class: 'actions' },
      rerunnable && options.runAgain ? h('button', { type: 'button', on: { click: () => options.runAgain!(rerunnable.entry, rerunnable.args!) } }, `Run ${rerunnable.entry} again…`) : null,
      h('button', { type: 'button', on: { click: options.close } }, 'Close'),
    ),
  );
}

/** The failure first: code and status, the message, where in the source, the diagnostics — and for a refusal by a policy, which roles it lets in. */
function failureBox(trace: TraceDetail, entrySpan: Span | undefined, policies: Record<string, PolicyRoles>): HTMLElement {
  const failure = trace.failure;
  const policy = entrySpan?.attributes['fw.policy'];
  const roles = typeof policy === 'string' ? policies[policy] : undefined;
  const diagnostics = (failure?.diagnostics ?? []).filter((d) => d.path !== failure?.location && d.message !== failure?.message);
  return h(
    'div',
    { class: 'result error', 'data-testid': 'trace-error' },
    h('p', { class: 'result-head' }, badge(trace.code ?? 'failed', 'bad'), trace.status ? ` ${trace.status}` : ''),
    h('p', null, h('strong', null, failure?.message ?? trace.message ?? 'The spans say only the code: the message was not kept.')),
    failure?.location ? h('p', null, 'at ', h('code', null, failure.location)) : null,
    diagnostics.length ? h('ul', { class: 'diagnostics' }, diagnostics.map((d) => h('li', null, h('code', null, d.path || '(args)'), ' ', d.message, ' ', h('span', { class: 'muted' }, `(${d.code})`)))) : null,
    trace.code === 'forbidden' && typeof policy === 'string' && roles ? h('p', { 'data-testid': 'policy-hint' }, policyHint(policy, roles, trace.caller?.role ?? null)) : null,
  );
}

/** `Policy admin lets in role admin; the caller had no role.` */
export function policyHint(policy: string, roles: PolicyRoles, role: string | null): Child {
  if (roles.anyRole || roles.roles.length === 0) return `Policy ${policy} refused this caller (it decides on more than the role).`;
  const list = roles.roles.join(', ');
  return [`Policy ${policy} lets in role${roles.roles.length === 1 ? '' : 's'} `, h('strong', null, list), `; the caller had ${role ? `role ${role}` : 'no role'}.`];
}

function spanDetail(span: Span): HTMLElement {
  const sql = typeof span.attributes['db.query.text'] === 'string' ? span.attributes['db.query.text'] : span.sql;
  const attributes = Object.entries(span.attributes).filter(([key]) => key !== 'db.query.text');
  return h(
    'div',
    { class: 'span-detail', id: `span-${span.spanId}` },
    sql ? h('pre', { class: 'code sql', tabindex: 0, 'aria-label': `SQL of ${span.name}` }, sql) : null,
    h('dl', { class: 'facts attrs' }, attributes.map(([key, value]) => [h('dt', null, h('code', null, key)), h('dd', null, h('code', null, String(value)))])),
    h('p', { class: 'hint' }, `span ${span.spanId} · started ${new Date(span.start).toLocaleTimeString()}`),
  );
}

function ioBlock(title: string, text: string | null): HTMLElement {
  return h('div', null, h('h4', null, title), text === null ? h('p', { class: 'muted' }, 'none') : h('pre', { class: 'code', tabindex: 0, 'aria-label': title }, pretty(text)));
}
