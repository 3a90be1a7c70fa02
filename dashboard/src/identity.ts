import { api } from './api.ts';
import { defaultIdentity } from './default-identity.ts';
import { h, mount } from './h.ts';
import { patch } from './patch.ts';
import type { Identity, PolicyRoles } from './shell.ts';

/**
 * The identity the dashboard acts as (the dev auth headers' user, tenant and role), picked rather than
 * typed: the roles come from src/policies.ts (each policy asked which it lets in), the tenants from the
 * data (tenant-scoped tables' rows), and the last identities used are a pick away. Kept in localStorage.
 */
interface Choices {
  roles: string[];
  policies: Record<string, PolicyRoles>;
  tenants: Array<{ tenantId: string; rows: number }>;
  dev: boolean;
}

const IDENTITY_KEY = 'fw.dashboard.identity';
const RECENT_KEY = 'fw.dashboard.recent-identities';
const RECENT = 6;

function read<T>(key: string): T | undefined {
  try {
    return JSON.parse(localStorage.getItem(key) ?? '') as T;
  } catch {
    return undefined;
  }
}

const saved = read<Partial<Identity>>(IDENTITY_KEY);
let identity: Identity = { userId: saved?.userId ?? defaultIdentity.userId, tenantId: saved?.tenantId ?? defaultIdentity.tenantId, role: saved?.role ?? '' };
let recent: Identity[] = (read<Identity[]>(RECENT_KEY) ?? []).filter((i) => i && typeof i.userId === 'string');
let choices: Choices = { roles: [], policies: {}, tenants: [], dev: false };
const listeners: Array<() => boolean> = [];

export function currentIdentity(): Identity {
  return identity;
}

export function policies(): Record<string, PolicyRoles> {
  return choices.policies;
}

/** Whether the server is in dev mode (false until it said). */
export function devMode(): boolean {
  return choices.dev;
}

/** Calls `listener` whenever the identity changes, until it answers false (its view is gone). */
export function onIdentityChange(listener: () => boolean): void {
  listeners.push(listener);
}

const same = (a: Identity, b: Identity) => a.userId === b.userId && a.tenantId === b.tenantId && a.role === b.role;

export function setIdentity(change: Partial<Identity>): void {
  identity = { ...identity, ...change };
  localStorage.setItem(IDENTITY_KEY, JSON.stringify(identity));
  render();
  tell();
}

function tell(): void {
  for (const listener of [...listeners]) if (!listener()) listeners.splice(listeners.indexOf(listener), 1);
}

/** Puts the identity first among the recent ones (called when something ran as it). */
export function rememberIdentity(): void {
  recent = [identity, ...recent.filter((i) => !same(i, identity))].slice(0, RECENT);
  localStorage.setItem(RECENT_KEY, JSON.stringify(recent));
  render();
}

/** `dash · 799b5789… · admin` */
export function describe(i: Identity): string {
  return [i.userId || 'anonymous', i.userId && i.tenantId ? `${i.tenantId.slice(0, 8)}…` : null, i.userId ? i.role || 'no role' : null].filter(Boolean).join(' · ');
}

const summary = h('summary');
const form = h('form', { class: 'identity', 'aria-label': 'Act as (dev auth headers)', on: { submit: (e: Event) => e.preventDefault() } });
const wide = matchMedia('(min-width: 701px)');
export const identityFold = h('details', { class: 'identity-fold', open: wide.matches }, summary, form);
wide.addEventListener('change', () => (identityFold.open = wide.matches));

const userInput = h('input', { 'data-identity': 'userId', 'aria-label': 'Act as user', placeholder: 'anonymous', spellcheck: false, autocomplete: 'off', list: 'identity-users' });
const tenantInput = h('input', { 'data-identity': 'tenantId', 'aria-label': 'Act as tenant', placeholder: 'no tenant', spellcheck: false, autocomplete: 'off', list: 'identity-tenants' });
const roleSelect = h('select', { 'data-identity': 'role', 'aria-label': 'Act as role' });
const recentSelect = h('select', { 'aria-label': 'Recent identities', class: 'recent' });
const userList = h('datalist', { id: 'identity-users' });
const tenantList = h('datalist', { id: 'identity-tenants' });

userInput.addEventListener('change', () => setIdentity({ userId: userInput.value.trim() }));
tenantInput.addEventListener('change', () => setIdentity({ tenantId: tenantInput.value.trim() }));
roleSelect.addEventListener('change', () => setIdentity({ role: roleSelect.value }));
recentSelect.addEventListener('change', () => {
  const picked = recent[Number(recentSelect.value)];
  if (picked) setIdentity(picked);
  recentSelect.value = '';
});

mount(
  form,
  h('label', { class: 'field' }, h('span', null, 'User'), userInput),
  h('label', { class: 'field tenant' }, h('span', null, 'Tenant'), tenantInput),
  h('button', { type: 'button', class: 'small', title: 'A tenant no row belongs to yet', on: { click: () => setIdentity({ tenantId: crypto.randomUUID() }) } }, 'New'),
  h('label', { class: 'field' }, h('span', null, 'Role'), roleSelect),
  recentSelect,
  userList,
  tenantList,
);

function render(): void {
  if (document.activeElement !== userInput) userInput.value = identity.userId;
  if (document.activeElement !== tenantInput) tenantInput.value = identity.tenantId;
  const roles = [...new Set([...choices.roles, ...(identity.role ? [identity.role] : [])])];
  patch(
    roleSelect,
    h('option', { value: '', selected: identity.role === '' }, 'none'),
    roles.map((role) => h('option', { value: role, selected: role === identity.role }, role)),
  );
  roleSelect.value = identity.role;
  patch(recentSelect, h('option', { value: '' }, recent.length ? 'Recent…' : 'No recent'), recent.map((i, n) => h('option', { value: String(n) }, describe(i))));
  recentSelect.disabled = recent.length === 0;
  patch(userList, [...new Set(recent.map((i) => i.userId).filter(Boolean))].map((u) => h('option', { value: u })));
  patch(tenantList, choices.tenants.map((t) => h('option', { value: t.tenantId, label: `${t.rows} row${t.rows === 1 ? '' : 's'}` })));
  mount(summary, h('span', null, 'Act as'), h('code', null, describe(identity)));
}
render();

/** Asks the server for the roles and tenants to offer; a fresh dashboard starts as the role most policies let in. */
export async function loadChoices(): Promise<void> {
  choices = await api<Choices>('/_fw/dashboard/api/identities');
  if (!saved && identity.role === '' && choices.roles.length > 0) {
    const score = (role: string) => Object.values(choices.policies).filter((p) => p.roles.includes(role)).length;
    identity = { ...identity, role: [...choices.roles].sort((a, b) => score(b) - score(a))[0]! };
  }
  render();
  tell();
}
