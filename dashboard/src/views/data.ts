import { api } from '../api.ts';
import { ago, badge, h, json, mount, table } from '../h.ts';
import { patch } from '../patch.ts';
import type { View } from '../shell.ts';
import { moveFocus } from './functions.ts';

interface TableInfo {
  name: string;
  tenantScoped: boolean;
  columns: Array<{ name: string; kind: string; nullable: boolean; primaryKey: boolean; references?: string }>;
  rows: number;
  tenants: Array<{ tenantId: string; rows: number }>;
}
interface DbStatus {
  database: string;
  applied: Array<{ id: number; appliedAt: string; fwVersion: string; changes: Array<{ kind: string; description: string }> }>;
  pending: Array<{ kind: string; description: string; destructive: boolean; sql: string[] }>;
  blocked: Array<{ path: string; code: string; message: string }>;
}

const PAGE = 25;
const OVERVIEW = '';

export const dataView: View = {
  id: 'data',
  title: 'Data',
  render(container, context) {
    const list = h('div', { class: 'list', role: 'listbox', 'aria-label': 'Tables' });
    const detail = h('div', { class: 'detail' });
    mount(container, h('div', { class: 'split' }, h('div', { class: 'side' }, list), detail));
    let tables: TableInfo[] = [];
    let status: DbStatus | undefined;
    let selected = context.param;
    // The row browser's state survives polling; a new table starts over.
    const browse = { as: 'owner' as 'owner' | 'tenant', tenant: '', column: '', value: '', offset: 0, sort: '', descending: false };
    // The row open in the drawer (by its place in the page), and the button that opened it, for focus to go back to.
    let drawerRow: Record<string, unknown> | undefined;
    let drawerOpener: string | undefined;
    const drawer = h('div', { class: 'drawer-host' });
    container.append(drawer);
    let rowsBox: HTMLElement | undefined;
    let tenantsBox: HTMLElement | undefined;

    // One Tab stop for the list (the chosen item); the arrow keys move within it.
    const stop = (name: string) => (name === (selected === OVERVIEW || tables.some((t) => t.name === selected) ? selected : OVERVIEW) ? 0 : -1);
    const renderList = () =>
      patch(
        list,
        h('button', { type: 'button', role: 'option', class: 'list-item', 'data-key': '', tabindex: stop(OVERVIEW), 'aria-selected': String(selected === OVERVIEW), on: { click: () => context.navigate('#/data'), keydown: (e: KeyboardEvent) => moveFocus(e, list) } }, h('span', null, 'Schema & migrations'), status && changesLabel(status) ? badge(changesLabel(status)!, status.blocked.length > 0 ? 'bad' : 'warn') : null),
        tables.map((t) =>
          h('button', { type: 'button', role: 'option', class: 'list-item', 'data-key': `t-${t.name}`, tabindex: stop(t.name), 'aria-selected': String(selected === t.name), on: { click: () => context.navigate(`#/data/${encodeURIComponent(t.name)}`), keydown: (e: KeyboardEvent) => moveFocus(e, list) } }, h('span', { class: 'name' }, t.name), h('span', { class: 'count' }, String(t.rows))),
        ),
      );

    const renderOverview = () => {
      rowsBox = tenantsBox = undefined;
      if (!status) return mount(detail, h('p', { class: 'empty' }, 'Loading…'));
      patch(
        detail,
        h(
          'div',
          { class: 'stats' },
          stat('Database', status.database),
          stat('Tables', tables.length),
          stat('Migrations applied', status.applied.length),
          stat('Pending changes', status.pending.length),
          stat('Blocked changes', status.blocked.length),
        ),
        h(
          'article',
          { class: 'card', 'aria-labelledby': 'pending-title' },
          h('h2', { id: 'pending-title' }, 'Pending and blocked changes'),
          status.pending.length + status.blocked.length === 0 ? h('p', { class: 'empty' }, 'The database matches src/fw/schema.ts.') : null,
          status.pending.length
            ? table('Pending changes', [['Change', (c) => c.description], ['Kind', (c) => h('code', { class: 'nowrap' }, c.kind)], ['Risk', (c) => (c.destructive ? badge('destructive', 'bad') : h('span', { class: 'muted' }, 'safe'))], ['SQL', (c) => h('code', { class: 'cell', title: c.sql.join(';\n') }, c.sql.join('; '))]], status.pending, '')
            : null,
          status.blocked.length ? h('ul', { class: 'diagnostics' }, status.blocked.map((b) => h('li', null, badge(b.code, 'bad'), ' ', b.message))) : null,
        ),
        h(
          'article',
          { class: 'card', 'aria-labelledby': 'applied-title' },
          h('h2', { id: 'applied-title' }, 'Applied migrations'),
          h('div', { style: 'margin-top:12px' }),
          table(
            'Applied migrations',
            [['#', (m) => m.id], ['Applied', (m) => h('span', { class: 'nowrap', title: m.appliedAt }, ago(m.appliedAt))], ['fw', (m) => h('span', { class: 'nowrap' }, m.fwVersion)], ['Changes', (m) => m.changes.map((c) => c.description).join('; ')]],
            [...status.applied].reverse(),
            'No migration applied yet.',
          ),
        ),
      );
    };

    const renderTable = (t: TableInfo) => {
      const tenantSelect = h('select', { 'aria-label': 'Tenant', disabled: !t.tenantScoped }, h('option', { value: '' }, 'all tenants'), t.tenants.map((x) => h('option', { value: x.tenantId, selected: x.tenantId === browse.tenant }, x.tenantId)));
      const asSelect = h('select', { 'aria-label': 'Read as' }, h('option', { value: 'owner', selected: browse.as === 'owner' }, 'owner (all rows)'), h('option', { value: 'tenant', selected: browse.as === 'tenant' }, 'tenant at the top (RLS)'));
      const columnSelect = h('select', { 'aria-label': 'Filter column' }, t.columns.map((c) => h('option', { value: c.name, selected: c.name === browse.column }, c.name)));
      const valueInput = h('input', { type: 'search', 'aria-label': 'Filter value', placeholder: 'contains…', value: browse.value });
      const apply = () => {
        browse.as = asSelect.value as 'owner' | 'tenant';
        browse.tenant = tenantSelect.value;
        browse.column = columnSelect.value;
        browse.value = valueInput.value;
        browse.offset = 0;
        tenantSelect.disabled = !t.tenantScoped || browse.as === 'tenant';
        void loadRows(t);
      };
      tenantSelect.disabled = !t.tenantScoped || browse.as === 'tenant';
      rowsBox = h('div', { class: 'rows' }, h('p', { class: 'empty' }, 'Loading rows…'));
      tenantsBox = h('div');
      mount(
        detail,
        h(
          'article',
          { class: 'card', 'aria-labelledby': 'table-title' },
          h('header', { class: 'card-head' }, h('h2', { id: 'table-title' }, t.name), t.tenantScoped ? badge('tenant-scoped', 'good') : badge('shared')),
          h(
            'form',
            { class: 'toolbar', 'aria-label': 'Browse rows', style: 'margin-top:14px', on: { submit: (e: Event) => { e.preventDefault(); apply(); } } },
            h('label', null, 'Read as', asSelect),
            h('label', null, 'Tenant', tenantSelect),
            h('label', null, 'Column', columnSelect),
            h('label', null, 'Contains', valueInput),
            h('button', { type: 'submit', class: 'primary' }, 'Apply'),
          ),
          rowsBox,
        ),
        h('article', { class: 'card', 'aria-labelledby': 'tenants-title' }, h('h2', { id: 'tenants-title' }, 'Rows per tenant'), h('div', { style: 'margin-top:12px' }, tenantsBox)),
        h(
          'article',
          { class: 'card', 'aria-labelledby': 'columns-title' },
          h('h2', { id: 'columns-title' }, 'Columns'),
          h('div', { style: 'margin-top:12px' }),
          table('Columns', [['Name', (c) => h('code', null, c.name)], ['Type', (c) => h('code', null, c.kind)], ['Flags', (c) => [c.primaryKey ? badge('primary key') : null, c.nullable ? badge('nullable') : null]], ['References', (c) => (c.references ? h('code', null, c.references) : '')]], t.columns, ''),
        ),
      );
      for (const select of [asSelect, tenantSelect, columnSelect]) select.addEventListener('change', apply);
      renderTenants(t);
    };

    const renderTenants = (t: TableInfo) => {
      if (!tenantsBox) return;
      patch(tenantsBox, t.tenantScoped ? table('Rows per tenant', [['Tenant', (x) => h('code', null, x.tenantId)], ['Rows', (x) => x.rows]], t.tenants, 'No rows yet.') : h('p', { class: 'empty' }, `${t.rows} rows, shared by every tenant.`));
    };

    const loadRows = async (t: TableInfo) => {
      const box = rowsBox;
      if (!box) return;
      const params = new URLSearchParams({ table: t.name, limit: String(PAGE), offset: String(browse.offset) });
      if (browse.as === 'tenant') params.set('asTenant', context.identity().tenantId);
      else if (browse.tenant) params.set('tenant', browse.tenant);
      if (browse.value) {
        params.set('column', browse.column || t.columns[0]!.name);
        params.set('value', browse.value);
      }
      if (browse.sort) {
        params.set('sort', browse.sort);
        params.set('dir', browse.descending ? 'desc' : 'asc');
      }
      try {
        const page = await api<{ rows: Record<string, unknown>[]; total: number; as: string }>(`/_fw/dashboard/api/rows?${params}`);
        const key = t.columns.find((c) => c.primaryKey)?.name;
        const rowKey = (row: Record<string, unknown>, n: number) => (key ? String(row[key]) : String(browse.offset + n));
        const columns: Array<[string, (row: Record<string, unknown>) => Node]> = [
          // Each row opens in a drawer with every value whole.
          ['', (row) => h('button', { type: 'button', class: 'open-row', 'data-opener': rowKey(row, page.rows.indexOf(row)), 'aria-label': `Open row ${rowKey(row, page.rows.indexOf(row)).slice(0, 8)}`, on: { click: () => openDrawer(t, row, rowKey(row, page.rows.indexOf(row))) } }, '⤢')],
          ...t.columns.map((c): [string, (row: Record<string, unknown>) => Node] => [c.name, (row) => cell(row[c.name])]),
        ];
        const last = Math.min(browse.offset + page.rows.length, page.total);
        const sortBy = (column: string) => {
          if (browse.sort === column) browse.descending = !browse.descending;
          else Object.assign(browse, { sort: column, descending: false });
          browse.offset = 0;
          void loadRows(t);
        };
        patch(
          box,
          table(`Rows of ${t.name}`, columns, page.rows, browse.value ? 'No row matches.' : 'No rows.', {
            nowrap: true,
            key: (row) => rowKey(row, page.rows.indexOf(row)),
            sort: { column: browse.sort, descending: browse.descending, by: sortBy },
          }),
          h(
            'div',
            { class: 'pager' },
            h('button', { type: 'button', disabled: browse.offset === 0, on: { click: () => { browse.offset = Math.max(0, browse.offset - PAGE); void loadRows(t); } } }, '← Previous'),
            h('span', { 'data-testid': 'row-range' }, page.total === 0 ? '0 rows' : `${browse.offset + 1}–${last} of ${page.total}`, page.as === 'tenant' ? ' (as the tenant)' : ''),
            h('button', { type: 'button', disabled: last >= page.total, on: { click: () => { browse.offset += PAGE; void loadRows(t); } } }, 'Next →'),
          ),
        );
      } catch (error) {
        mount(box, h('p', { class: 'result error' }, (error as Error).message));
      }
    };

    /** A row whole, beside the table: every column with its full value (JSON pretty-printed, long text wrapped). */
    const renderDrawer = (t: TableInfo) => {
      if (!drawerRow) return mount(drawer);
      const row = drawerRow;
      patch(
        drawer,
        h(
          'div',
          { class: 'drawer', role: 'dialog', 'aria-labelledby': 'drawer-title', on: { keydown: (e: KeyboardEvent) => e.key === 'Escape' && closeDrawer(true) } },
          h('header', { class: 'card-head' }, h('h2', { id: 'drawer-title', tabindex: -1 }, `Row of ${t.name}`), h('button', { type: 'button', class: 'close', on: { click: () => closeDrawer(true) } }, 'Close')),
          h(
            'dl',
            { class: 'row-values' },
            t.columns.map((c) => [
              h('dt', null, h('code', null, c.name), ' ', h('span', { class: 'muted' }, c.kind)),
              h('dd', null, row[c.name] === null || row[c.name] === undefined ? h('span', { class: 'muted' }, 'null') : typeof row[c.name] === 'object' ? h('pre', { class: 'code' }, json(row[c.name])) : h('div', { class: 'value' }, String(row[c.name]))),
            ]),
          ),
        ),
      );
    };
    const openDrawer = (t: TableInfo, row: Record<string, unknown>, opener: string) => {
      drawerRow = row;
      drawerOpener = opener;
      renderDrawer(t);
      drawer.querySelector<HTMLElement>('#drawer-title')?.focus();
    };
    const closeDrawer = (returnFocus: boolean) => {
      drawerRow = undefined;
      mount(drawer);
      if (returnFocus && drawerOpener) detail.querySelector<HTMLElement>(`[data-opener="${CSS.escape(drawerOpener)}"]`)?.focus();
    };

    const show = () => {
      renderList();
      const t = tables.find((x) => x.name === selected);
      if (t) {
        renderTable(t);
        void loadRows(t);
      } else renderOverview();
    };

    let first = true;
    // The migration plan reads the whole catalog: asked for on the overview only, at most every 10 s.
    let statusAt = 0;
    const loadStatus = async () => {
      if (status && (selected !== OVERVIEW || Date.now() - statusAt < 10_000)) return;
      status = await api<DbStatus>('/_fw/db/status');
      statusAt = Date.now();
    };
    return {
      async refresh() {
        const [answer] = await Promise.all([api<{ tables: TableInfo[] }>('/_fw/dashboard/api/tables'), loadStatus()]);
        tables = answer.tables;
        if (first) {
          first = false;
          return show();
        }
        // Polling updates counts and the current page without touching what the developer is typing.
        renderList();
        const t = tables.find((x) => x.name === selected);
        if (t) {
          renderTenants(t);
          await loadRows(t);
        } else renderOverview();
      },
      onParam(param) {
        selected = param;
        Object.assign(browse, { as: 'owner', tenant: '', column: '', value: '', offset: 0, sort: '', descending: false });
        closeDrawer(false);
        show();
        if (selected === OVERVIEW) void loadStatus().then(() => selected === OVERVIEW && renderOverview());
      },
    };
  },
};

function stat(label: string, value: string | number): HTMLElement {
  return h('div', { class: 'stat' }, h('div', { class: 'value' }, String(value)), h('div', { class: 'label' }, label));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function cell(value: unknown): Node {
  if (value === null || value === undefined) return h('span', { class: 'muted' }, 'null');
  // An id reads by its first 8 characters; the whole of it is on hover.
  if (typeof value === 'string' && UUID.test(value)) return h('span', { class: 'id', title: value }, value.slice(0, 8));
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return h('span', { class: 'cell', title: typeof value === 'object' ? json(value) : text }, text);
}

/**
 * The list's badge for changes not applied: pending (fw applies them) and blocked (they wait for a
 * decision) counted apart, in the words of the overview's stats — one count said "1 pending" beside
 * "Pending changes 0" when the one change was blocked.
 */
function changesLabel(status: { pending: readonly unknown[]; blocked: readonly unknown[] }): string | undefined {
  const parts = [status.pending.length > 0 ? `${status.pending.length} pending` : '', status.blocked.length > 0 ? `${status.blocked.length} blocked` : ''].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : undefined;
}
