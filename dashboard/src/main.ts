import './style.css';
import { adminToken, ApiError, isAuthError, setAdminToken } from './api.ts';
import { h, mount } from './h.ts';
import { currentIdentity, devMode, identityFold, loadChoices, policies, setIdentity } from './identity.ts';
import type { View, ViewInstance } from './shell.ts';
import { dataView } from './views/data.ts';
import { functionsView } from './views/functions.ts';
import { liveView } from './views/live.ts';
import { outboxView } from './views/outbox.ts';
import { requestsView } from './views/requests.ts';
import { logsView } from './views/logs.ts';
import { aiView } from './views/ai.ts';
import { mcpView } from './views/mcp.ts';

const views: View[] = [functionsView, dataView, liveView, outboxView, requestsView, logsView, aiView, mcpView];
const POLL_MS = 2000;
const LIVE_KEY = 'fw.dashboard.live';

const nav = h('nav', { class: 'nav', 'aria-label': 'Views' }, h('ul', null, views.map((view, i) => h('li', null, h('a', { href: `#/${view.id}`, 'data-view': view.id, title: `${view.title} (key ${i + 1})` }, view.title)))));
const main = h('main', { id: 'main', class: 'main', tabindex: -1 });
const status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });

/**
 * Live or paused: live, the views follow the app every couple of seconds (in place: patch.ts keeps your
 * focus, selection and scroll); paused, nothing moves until you say so. Kept for this tab.
 */
let live = sessionStorage.getItem(LIVE_KEY) !== 'paused';
const liveToggle = h('button', {
  type: 'button',
  class: 'live-toggle',
  title: 'Live: the views follow the app every 2 s. Paused: they hold still.',
  on: {
    click: () => {
      live = !live;
      sessionStorage.setItem(LIVE_KEY, live ? 'live' : 'paused');
      renderLive();
      if (live) void poll();
    },
  },
});
function renderLive(): void {
  liveToggle.setAttribute('aria-pressed', String(live));
  mount(liveToggle, h('span', { class: 'dot', 'aria-hidden': 'true' }), live ? 'Live' : 'Paused');
  if (!live) {
    status.textContent = 'Paused: updates are held until you press Live.';
    status.classList.remove('error');
  }
}
renderLive();

mount(
  document.getElementById('app')!,
  h('a', { class: 'skip', href: '#main', on: { click: (e: Event) => { e.preventDefault(); main.focus(); } } }, 'Skip to content'),
  h('header', { class: 'top' }, h('div', { class: 'brand' }, h('span', { class: 'logo', 'aria-hidden': 'true' }, 'fw'), h('span', null, 'dashboard')), liveToggle, identityFold),
  h('div', { class: 'layout' }, nav, h('div', { class: 'content' }, main, status)),
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
  const instance = view.render(body, { identity: currentIdentity, setIdentity, policies, dev: devMode, param, navigate: (hash) => (location.hash = hash) });
  current = { view, param, instance };
  void poll(true);
}

let polling = false;
async function poll(first = false): Promise<void> {
  if (!current?.instance.refresh || polling) return;
  if (!first && (!live || document.visibilityState !== 'visible')) return;
  polling = true;
  const started = current;
  try {
    await current.instance.refresh();
    if (current === started && live) status.textContent = `Updated ${new Date().toLocaleTimeString()}`;
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
            void loadChoices().catch(() => {});
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
// Roles and tenants to pick from; asked again when the tenant field is used (new data, new tenants).
void loadChoices().catch(() => {});
identityFold.querySelector('[data-identity="tenantId"]')?.addEventListener('focus', () => void loadChoices().catch(() => {}));
