import { api, ApiError } from '../api.ts';
import { badge, h, json, mount, table } from '../h.ts';
import { onIdentityChange, rememberIdentity } from '../identity.ts';
import type { Identity, PolicyRoles, View } from '../shell.ts';
import { policyHint } from './trace.ts';

interface FunctionInfo {
  name: string;
  kind: string;
  policy: string;
  route?: string;
  description?: string;
  file?: string;
  runnable: boolean;
  args: Record<string, any> | null;
}

interface RunAnswer {
  ok: boolean;
  result?: unknown;
  error?: { code: string; status: number; message: string; diagnostics: Array<{ path: string; code: string; message: string }>; location?: string };
  durationMs: number;
  traceId: string;
}

/** A starting point for the args editor: each required property of the schema with a value of its type. */
function skeleton(schema: Record<string, any> | null): unknown {
  if (!schema || schema.type !== 'object' || !schema.properties) return {};
  const out: Record<string, unknown> = {};
  const required = new Set<string>(schema.required ?? []);
  for (const [key, prop] of Object.entries<Record<string, any>>(schema.properties)) {
    if (!required.has(key)) continue;
    out[key] = prop.default ?? (prop.enum ? prop.enum[0] : prop.type === 'string' ? '' : prop.type === 'number' || prop.type === 'integer' ? 0 : prop.type === 'boolean' ? false : prop.type === 'array' ? [] : prop.type === 'object' ? {} : null);
  }
  return out;
}

export const functionsView: View = {
  id: 'functions',
  title: 'Functions',
  render(container, context) {
    const list = h('div', { class: 'list', role: 'listbox', 'aria-label': 'Entries' });
    const detail = h('div', { class: 'detail' }, h('p', { class: 'empty' }, 'Loading entries…'));
    const search = h('input', { type: 'search', placeholder: 'Filter entries', 'aria-label': 'Filter entries', class: 'search' });
    mount(container, h('div', { class: 'split' }, h('div', { class: 'side' }, search, list), detail));
    let functions: FunctionInfo[] = [];
    let dev = true;
    const drafts = new Map<string, string>();
    let selected = context.param;

    const select = (name: string) => context.navigate(`#/functions/${encodeURIComponent(name)}`);
    const renderList = () => {
      const q = search.value.trim().toLowerCase();
      const shown = functions.filter((f) => !q || f.name.toLowerCase().includes(q) || f.kind.includes(q));
      mount(
        list,
        shown.length === 0 ? h('p', { class: 'empty' }, functions.length === 0 ? 'This app has no entries yet.' : 'No entry matches.') : null,
        shown.map((f) =>
          h(
            'button',
            {
              type: 'button',
              role: 'option',
              class: 'list-item',
              'aria-selected': String(f.name === selected),
              // One Tab stop for the list (the chosen entry); the arrow keys move within it.
              tabindex: f.name === (shown.some((x) => x.name === selected) ? selected : shown[0]!.name) ? 0 : -1,
              on: { click: () => select(f.name), keydown: (e: KeyboardEvent) => moveFocus(e, list) },
            },
            h('span', { class: 'name' }, f.name),
            badge(f.kind, `kind-${f.kind}`),
          ),
        ),
      );
    };
    search.addEventListener('input', renderList);

    const renderDetail = (f: FunctionInfo | undefined) => {
      if (!f) return mount(detail, h('p', { class: 'empty' }, functions.length ? 'Pick an entry to see its args and run it.' : ''));
      const argsInput = h('textarea', { id: 'run-args', rows: 6, spellcheck: false, class: 'code' });
      // A request's args sent here from its trace ("Run … again") come first, once.
      const handed = sessionStorage.getItem(`fw.dashboard.draft.${f.name}`);
      if (handed !== null) {
        sessionStorage.removeItem(`fw.dashboard.draft.${f.name}`);
        drafts.set(f.name, json(JSON.parse(handed)));
      }
      argsInput.value = drafts.get(f.name) ?? json(skeleton(f.args));
      argsInput.addEventListener('input', () => drafts.set(f.name, argsInput.value));
      const output = h('div', { class: 'run-output', 'aria-live': 'polite' });
      const run = async () => {
        let args: unknown;
        try {
          args = JSON.parse(argsInput.value || '{}');
        } catch (error) {
          return mount(output, h('div', { class: 'result error' }, h('strong', null, 'Args are not JSON: '), (error as Error).message));
        }
        const who = context.identity();
        mount(output, h('p', { class: 'empty' }, 'Running…'));
        try {
          const answer = await api<RunAnswer>('/_fw/dashboard/api/run', { method: 'POST', body: { name: f.name, args, identity: who } });
          rememberIdentity();
          const asRole = (role: string) => {
            context.setIdentity({ role });
            renderDetail(f);
            void (document.querySelector<HTMLFormElement>('form.run')?.requestSubmit());
          };
          mount(output, renderAnswer(answer, context.navigate, { policy: f.policy, roles: context.policies()[f.policy], identity: who, asRole }));
        } catch (error) {
          const e = error instanceof ApiError ? error : new ApiError(0, 'network', String(error));
          mount(output, h('div', { class: 'result error', 'data-testid': 'run-error' }, h('p', null, badge(e.code, 'bad'), ' ', e.message)));
        }
      };
      const who = context.identity();
      mount(
        detail,
        h(
          'article',
          { class: 'card', 'aria-labelledby': 'fn-name' },
          h('header', { class: 'card-head' }, h('h2', { id: 'fn-name' }, f.name), badge(f.kind, `kind-${f.kind}`)),
          f.description ? h('p', { class: 'lede' }, f.description) : null,
          h(
            'dl',
            { class: 'facts' },
            h('dt', null, 'Policy'),
            h('dd', null, h('code', null, f.policy)),
            h('dt', null, 'Route'),
            h('dd', null, f.route ? h('code', null, f.route) : f.kind === 'liveQuery' ? h('code', null, `GET /live/${f.name}`) : '—'),
            h('dt', null, 'Source'),
            h('dd', null, f.file ? h('code', null, f.file) : '—'),
          ),
          h('h3', null, 'Args'),
          f.args ? argsTable(f.args) : h('p', { class: 'empty' }, 'No JSON Schema for these args.'),
          f.args ? h('details', { class: 'raw' }, h('summary', null, 'JSON Schema'), h('pre', { class: 'code', tabindex: 0, 'aria-label': 'Args JSON Schema' }, json(f.args))) : null,
          f.runnable && dev
            ? h(
                'form',
                { class: 'run', 'aria-label': `Run ${f.name}`, on: { submit: (e: Event) => { e.preventDefault(); void run(); } } },
                h('h3', null, 'Run'),
                runAsHint(who),
                h('label', { for: 'run-args' }, 'Args (JSON)'),
                argsInput,
                h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, f.kind === 'command' ? 'Run command' : 'Run query'), h('span', { class: 'hint' }, 'Ctrl+Enter')),
                output,
              )
            : h('p', { class: 'hint' }, f.runnable ? 'Running entries is for dev mode only.' : `${f.kind} entries are run by fw (events, workflow starts, HTTP), not called directly.`),
        ),
      );
      argsInput.addEventListener('keydown', (e: KeyboardEvent) => {
        if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
          e.preventDefault();
          void run();
        }
      });
    };

    // The identity changed at the top: the run form says who it runs as now (what was typed stays).
    onIdentityChange(() => {
      detail.querySelector('.run-as')?.replaceWith(runAsHint(context.identity()));
      return detail.isConnected;
    });
    void api<{ functions: FunctionInfo[]; dev: boolean }>('/_fw/dashboard/api/functions').then(
      (answer) => {
        const order = ['command', 'query', 'liveQuery', 'endpoint', 'action', 'workflow'];
        functions = [...answer.functions].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind) || a.name.localeCompare(b.name));
        dev = answer.dev;
        if (!selected && functions[0]) selected = functions[0].name;
        renderList();
        renderDetail(functions.find((f) => f.name === selected) ?? (selected ? undefined : functions[0]));
      },
      (error: unknown) => mount(detail, h('p', { class: 'result error' }, String((error as Error).message))),
    );
    return {
      onParam(param) {
        selected = param;
        renderList();
        renderDetail(functions.find((f) => f.name === selected));
        detail.querySelector<HTMLElement>('h2')?.setAttribute('tabindex', '-1');
      },
    };
  },
};

function runAsHint(who: Identity): HTMLElement {
  return h(
    'p',
    { class: 'hint run-as' },
    'As ',
    h('strong', null, who.userId ? `user ${who.userId}` : 'anonymous'),
    who.userId && who.tenantId ? ` in tenant ${who.tenantId}` : '',
    who.userId ? `, ${who.role ? `role ${who.role}` : 'no role'}` : '',
    ' — change it at the top. Runs through the entry pipeline: policy, validation, row-level security.',
  );
}

/** The args' properties at a glance: name, type, required, constraints (the raw schema is one click away). */
function argsTable(schema: Record<string, any>): HTMLElement {
  const props = Object.entries<Record<string, any>>(schema.type === 'object' && schema.properties ? schema.properties : {});
  const required = new Set<string>(schema.required ?? []);
  const typeOf = (p: Record<string, any>): string =>
    p.enum ? p.enum.map((v: unknown) => JSON.stringify(v)).join(' | ') : p.anyOf ? p.anyOf.map(typeOf).join(' | ') : p.type === 'array' ? `${p.items ? typeOf(p.items) : 'unknown'}[]` : (p.format ? `${p.type} (${p.format})` : p.type) ?? 'any';
  const rules = (p: Record<string, any>) =>
    [
      p.minLength !== undefined ? `min length ${p.minLength}` : '',
      p.maxLength !== undefined ? `max length ${p.maxLength}` : '',
      p.minimum !== undefined ? `≥ ${p.minimum}` : '',
      p.maximum !== undefined ? `≤ ${p.maximum}` : '',
      // A format (uuid, email, …) says it in words; zod's regex for it would only repeat it, unreadably.
      p.pattern && !p.format ? `matches ${p.pattern}` : '',
      p.default !== undefined ? `default ${JSON.stringify(p.default)}` : '',
    ].filter(Boolean).join(', ');
  const columns: Array<[string, (prop: [string, Record<string, any>]) => HTMLElement | string]> = [
    ['Name', ([name]) => h('code', null, name)],
    ['Type', ([, p]) => h('code', null, typeOf(p))],
    ['Required', ([name]) => (required.has(name) ? badge('required') : h('span', { class: 'muted' }, 'optional'))],
  ];
  // Rules only when some property has one.
  if (props.some(([, p]) => rules(p))) columns.push(['Rules', ([, p]) => rules(p) || '—']);
  return table('Args', columns, props, 'Takes no args.');
}

/** What a refusal by a policy can say: which roles it lets in, and a button to run again as each. */
interface RefusalHelp {
  policy: string;
  roles: PolicyRoles | undefined;
  identity: Identity;
  asRole(role: string): void;
}

function renderAnswer(answer: RunAnswer, navigate: (hash: string) => void, help: RefusalHelp): HTMLElement {
  const trace = h('a', { href: `#/requests/${answer.traceId}`, on: { click: (e: Event) => { e.preventDefault(); navigate(`#/requests/${answer.traceId}`); } } }, 'trace');
  if (answer.ok) {
    return h('div', { class: 'result ok', 'data-testid': 'run-result' }, h('p', { class: 'result-head' }, badge('ok', 'good'), ` ${answer.durationMs} ms · `, trace), h('pre', { class: 'code', tabindex: 0, 'aria-label': 'Result' }, json(answer.result)));
  }
  const error = answer.error!;
  // The headline once, the place once: a diagnostic that only repeats them (an entry that threw) is left out.
  const tail = (text: string) => text.slice(text.lastIndexOf(': ') + 1).trim();
  const diagnostics = error.diagnostics.filter((d) => !(d.message === error.message || ((!d.path || d.path === error.location) && tail(d.message) === tail(error.message))));
  return h(
    'div',
    { class: 'result error', 'data-testid': 'run-error' },
    h('p', { class: 'result-head' }, badge(error.code, 'bad'), ` ${error.status} · ${answer.durationMs} ms · `, trace),
    h('p', null, h('strong', null, error.message)),
    error.location ? h('p', null, 'at ', h('code', null, error.location)) : null,
    diagnostics.length
      ? h('ul', { class: 'diagnostics' }, diagnostics.map((d) => h('li', null, h('code', null, d.path || '(args)'), ' ', d.message, ' ', h('span', { class: 'muted' }, `(${d.code})`))))
      : null,
    error.code === 'forbidden' && help.roles && help.roles.roles.length > 0 && !help.roles.anyRole
      ? [
          h('p', { 'data-testid': 'policy-hint' }, policyHint(help.policy, help.roles, help.identity.role || null)),
          h('div', { class: 'actions' }, help.roles.roles.map((role) => h('button', { type: 'button', on: { click: () => help.asRole(role) } }, `Run as ${role}`))),
        ]
      : null,
  );
}

/** Arrow keys move between the buttons of a list (a listbox's keyboard model). */
export function moveFocus(event: KeyboardEvent, list: HTMLElement): void {
  if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
  event.preventDefault();
  const items = [...list.querySelectorAll<HTMLElement>('button')];
  const at = items.indexOf(event.target as HTMLElement);
  items[Math.max(0, Math.min(items.length - 1, at + (event.key === 'ArrowDown' ? 1 : -1)))]?.focus();
}
