import './style.css';
import { adminToken, ApiError, isAuthError, setAdminToken } from './api.ts';
import { h, mount } from './h.ts';
import type { Identity, View, ViewInstance } from './shell.ts';
import { dataView } from './views/data.ts';
import { functionsView } from './views/functions.ts';
import { liveView } from './views/live.ts';
import { outboxView } from './views/outbox.ts';
import { requestsView } from './views/requests.ts';
import { logsView } from './views/logs.ts';
import { aiView } from './views/ai.ts';

const views: View[] = [functionsView, dataView, liveView, outboxView, requestsView, logsView, aiView];
const POLL_MS = 2000;
const IDENTITY_KEY = 'fw.dashboard.identity';

function loadIdentity(): Identity {
  try {
    const saved = JSON.parse(localStorage.getItem(IDENTITY_KEY) ?? '') as Partial<Identity>;
    return { userId: saved.userId ?? 'dev', tenantId: saved.tenantId ?? '00000000-0000-4000-8000-000000000001', role: saved.role ?? '' };
  } catch {
    return { userId: 'dev', tenantId: '00000000-0000-4000-8000-000000000001', role: '' };
  }
}

let identity = loadIdentity();
const identityField = (key: keyof Identity, label: string, placeholder: string) =>
  h('label', { class: 'field' }, h('span', null, label), h('input', {
    value: identity[key],
    placeholder,
    spellcheck: false,
    autocomplete: 'off',
    'data-identity': key,
    on: {
      change: (event: Event) => {
        identity = { ...identity, [key]: (event.target as HTMLInputElement).value.trim() };
        localStorage.setItem(IDENTITY_KEY, JSON.stringify(identity));
        renderIdentitySummary();
      },
    },
  }));

/** On a phone the identity folds to one line: `dash · 799b5789… · admin`. */
const identitySummary = h('summary', { 'aria-label': 'Act as' });
function renderIdentitySummary(): void {
  const parts = [identity.userId || 'anonymous', identity.tenantId ? `${identity.tenantId.slice(0, 4)}…` : null, identity.role || null].filter(Boolean);
  mount(identitySummary, h('span', null, 'Act as'), h('code', null, parts.join(' · ')));
}
renderIdentitySummary();
const wide = matchMedia('(min-width: 701px)');
const identityFold = h('details', { class: 'identity-fold', open: wide.matches });
wide.addEventListener('change', () => (identityFold.open = wide.matches));

const nav = h('nav', { class: 'nav', 'aria-label': 'Views' }, h('ul', null, views.map((view, i) => h('li', null, h('a', { href: `#/${view.id}`, 'data-view': view.id, title: `${view.title} (key ${i + 1})` }, view.title)))));
const main = h('main', { id: 'main', class: 'main', tabindex: -1 });
const status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });

mount(
  document.getElementById('app')!,
  h('a', { class: 'skip', href: '#main', on: { click: (e: Event) => { e.preventDefault(); main.focus(); } } }, 'Skip to content'),
  h(
    'header',
    { class: 'top' },
    h('div', { class: 'brand' }, h('span', { class: 'logo', 'aria-hidden': 'true' }, 'fw'), h('span', null, 'dashboard')),
    identityFold,
  ),
  h('div', { class: 'layout' }, nav, h('div', { class: 'content' }, main, status)),
);

identityFold.append(
  identitySummary,
  h(
    'form',
    { class: 'identity', 'aria-label': 'Act as (dev auth headers)', on: { submit: (e: Event) => e.preventDefault() } },
    identityField('userId', 'User', 'anonymous'),
    identityField('tenantId', 'Tenant', 'no tenant'),
    identityField('role', 'Role', 'none'),
  ),
);

let current: { view: View; param: string; instance: ViewInstance } | undefined;

function route(): void {
  const [, id = 'functions', ...rest] = location.hash.replace(/^#/, '').split('/');
  const view = views.find((v) => v.id === id) ?? views[0]!;
  const param = decodeURIComponent(rest.join('/'));
  if (current && current.view === view && current.param === param) return;
  if (current && current.view === view && current.instance.onParam) {
    current.param = param;
    return current.instance.onParam(param);
  }
  for (const link of nav.querySelectorAll('a')) {
    if (link.dataset.view === view.id) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  // On a phone the nav scrolls sideways: keep the current view in sight.
  nav.querySelector('[aria-current]')?.scrollIntoView({ inline: 'nearest', block: 'nearest' });
  document.title = `${view.title} · fw dashboard`;
  const container = h('section', { class: 'view', 'aria-labelledby': `title-${view.id}` }, h('h1', { id: `title-${view.id}` }, view.title));
  const body = h('div', { class: 'view-body' });
  container.append(body);
  mount(main, container);
  const instance = view.render(body, { identity: () => identity, param, navigate: (hash) => (location.hash = hash) });
  current = { view, param, instance };
  void poll(true);
}

let polling = false;
async function poll(first = false): Promise<void> {
  if (!current?.instance.refresh || polling) return;
  if (!first && document.visibilityState !== 'visible') return;
  polling = true;
  const started = current;
  try {
    await current.instance.refresh();
    if (current === started) status.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    status.classList.remove('error');
  } catch (error) {
    if (isAuthError(error)) askForToken();
    else {
      status.textContent = error instanceof ApiError ? `${error.code}: ${error.message}` : String(error);
      status.classList.add('error');
    }
  } finally {
    polling = false;
  }
}

/** Outside dev mode the routes need FW_ADMIN_TOKEN: ask once, keep it for this tab only. */
function askForToken(): void {
  if (document.getElementById('token-form')) return;
  const input = h('input', { type: 'password', id: 'token', autocomplete: 'off', required: true });
  mount(
    main,
    h(
      'form',
      {
        id: 'token-form',
        class: 'card token',
        on: {
          submit: (e: Event) => {
            e.preventDefault();
            setAdminToken(input.value);
            current = undefined;
            route();
          },
        },
      },
      h('h1', null, 'Admin token'),
      h('p', null, adminToken() ? 'The token was refused. ' : '', 'This server is not in dev mode: the dashboard needs the value of FW_ADMIN_TOKEN. It is kept in this tab only.'),
      h('label', { for: 'token' }, 'Token'),
      input,
      h('button', { type: 'submit', class: 'primary' }, 'Open'),
    ),
  );
  input.focus();
}

addEventListener('hashchange', route);
document.addEventListener('visibilitychange', () => void poll());
setInterval(() => void poll(), POLL_MS);
// Keys 1–7 switch views (not while typing).
document.addEventListener('keydown', (event) => {
  const target = event.target as HTMLElement;
  if (event.altKey || event.ctrlKey || event.metaKey || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) return;
  const view = views[Number(event.key) - 1];
  if (view) location.hash = `#/${view.id}`;
});
route();
