/** A tiny element builder: the dashboard needs no framework (it ships inside fw's package; kept small). */
export type Child = Node | string | number | null | undefined | false | Child[];
type Props = Record<string, unknown> & { class?: string; on?: Record<string, (event: any) => void> };

export type Handlers = Record<string, (event: any) => void>;

/**
 * An element's event handlers, looked up when the event comes: patch.ts, which keeps an element a
 * refresh would have replaced, gives it the new element's handlers (closed over the fresh data).
 */
const handlers = new WeakMap<Element, Handlers>();
const listening = new WeakMap<Element, Set<string>>();

export function setHandlers(el: Element, on: Handlers): void {
  handlers.set(el, on);
  const names = listening.get(el) ?? new Set<string>();
  listening.set(el, names);
  for (const name of Object.keys(on)) {
    if (names.has(name)) continue;
    names.add(name);
    el.addEventListener(name, (event) => handlers.get(el)?.[name]?.(event));
  }
}

export function handlersOf(el: Element): Handlers | undefined {
  return handlers.get(el);
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props | null = null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (key === 'on') {
      setHandlers(el, value as Handlers);
    } else if (value === false || value === null || value === undefined) {
      continue;
    } else if (key === 'class') {
      el.className = String(value);
    } else if (key === 'style') {
      // Through the CSSOM: the dashboard's CSP (style-src 'self') refuses style attributes.
      el.style.cssText = String(value);
    } else if (key in el && typeof value !== 'string') {
      (el as unknown as Record<string, unknown>)[key] = value;
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces what `el` holds. */
export function mount(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** Pretty JSON for a <pre>. */
export function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'undefined';
}

export function ago(iso: string | number | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const t = typeof iso === 'number' ? iso : Date.parse(iso);
  const s = Math.round((Date.now() - t) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return new Date(t).toLocaleString();
}

/** A time that may be ahead: `in 59 min`, `in 3 h` (then `ago` once it has passed). */
export function when(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const s = Math.round((Date.parse(iso) - Date.now()) / 1000);
  if (s < 0) return ago(iso);
  if (s < 5) return 'now';
  if (s < 60) return `in ${s} s`;
  // Up to the hour itself: a call an hour away reads `in 60 min` (not `in 1 h` the moment it is made).
  if (s <= 3600) return `in ${Math.round(s / 60)} min`;
  if (s < 86400) return `in ${Math.round(s / 3600)} h`;
  return `in ${Math.round(s / 86400)} d`;
}

/** A time to read at a glance and exactly on hover: `in 59 min` over `14:02:10`, the ISO time as its title. */
export function time(iso: string | null | undefined): HTMLElement | string {
  if (!iso) return '—';
  const date = new Date(iso);
  const sameDay = date.toDateString() === new Date().toDateString();
  return h('span', { class: 'time', title: iso }, when(iso), h('span', { class: 'muted' }, sameDay ? date.toLocaleTimeString() : date.toLocaleString()));
}

/** A table with a caption (its accessible name) and a row per item; `empty` when there is none. */
export function table<T>(
  caption: string,
  columns: Array<[string, (item: T) => Child]>,
  items: readonly T[],
  empty: string,
  // `key`: each row's id, so that a refresh (patch.ts) updates the row in place rather than the row at its index.
  // `sort`: the headers are buttons that sort by their column (the column sorted by says so in aria-sort).
  options: { rowClass?: (item: T) => string; nowrap?: boolean; key?: (item: T) => string; sort?: { column: string; descending: boolean; by(column: string): void } } = {},
): HTMLElement {
  if (items.length === 0) return h('p', { class: 'empty' }, empty);
  return h(
    'div',
    // `nowrap`: rows stay one line (long cells are cut with `.cell`) and the table scrolls sideways on a phone.
    { class: options.nowrap ? 'table-wrap nowrap' : 'table-wrap', role: 'region', 'aria-label': caption, tabindex: 0 },
    h(
      'table',
      null,
      h('caption', { class: 'sr-only' }, caption),
      // An `Actions` column stays pinned at the right edge while the table scrolls sideways (a phone).
      h('thead', null, h('tr', null, columns.map(([name]) => h('th', { scope: 'col', class: name === 'Actions' ? 'sticky-end' : undefined, 'aria-sort': options.sort?.column && options.sort.column === name ? (options.sort.descending ? 'descending' : 'ascending') : null }, name === '' ? h('span', { class: 'sr-only' }, 'Row') : options.sort && name !== 'Actions' ? sortButton(name, options.sort) : name)))),
      h('tbody', null, items.map((item) => h('tr', { class: options.rowClass?.(item) || undefined, 'data-key': options.key?.(item) ?? null }, columns.map(([name, cell]) => h('td', { class: name === 'Actions' ? 'sticky-end' : undefined }, cell(item)))))),
    ),
  );
}

function sortButton(name: string, sort: { column: string; descending: boolean; by(column: string): void }): HTMLElement {
  const arrow = sort.column === name ? (sort.descending ? '↓' : '↑') : '';
  return h('button', { type: 'button', class: 'sort', on: { click: () => sort.by(name) } }, name, h('span', { class: 'arrow', 'aria-hidden': 'true' }, arrow));
}

export function badge(text: string, tone = ''): HTMLElement {
  return h('span', { class: `badge ${tone}` }, text);
}
