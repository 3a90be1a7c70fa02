/**
 * Keyset (cursor) pagination for queries and liveQueries: `paginate(query, { orderBy }, args)` reads one
 * page of `query` in a total order and says where it ended. Page bounds are cursors — the order
 * columns' values of a page's last row — so a page is the range (cursor, endCursor] of the order, and
 * a write elsewhere in the table neither shifts it nor reruns it: the bounds are emitted as conditions
 * the live read set keeps (`a <= x AND (a < x OR (a = x AND id < y))` — the AND-ed `a <= x` is a range;
 * see docs/live.md "Pagination").
 *
 * @example
 *   export default liveQuery({
 *     args: { board: z.number().int(), page: paginationArgs },
 *     handler: (ctx, args) =>
 *       paginate(ctx.db.selectFrom('tickets').selectAll().where('board', '=', args.board), { orderBy: [['rank', 'desc'], ['id', 'desc']] }, args),
 *   });
 */
import { type SelectQueryBuilder, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { z } from 'zod';
import { canonicalJson } from './canonical-json.ts';
import { FwError } from './errors.ts';

/** An opaque position in a paginated query's order (the end of a page). */
export type Cursor = string;

/**
 * What a client sends for one page. The first load of a page has `numItems`; once a later page is
 * loaded the client holds this one by its bounds, `endCursor`, and `numItems` no longer limits it.
 */
export interface PaginationOptions {
  /** Where the page starts (exclusive); null for the first page. */
  cursor: Cursor | null;
  /** How many rows a page with no `endCursor` reads (1–1000). */
  numItems: number;
  /** Where the page ends (inclusive): given, the page is exactly (cursor, endCursor]. */
  endCursor?: Cursor | null | undefined;
}

/** One page and where the next starts. */
export interface PaginationResult<T> {
  page: T[];
  /** No row after this page (only ever true for a page read without `endCursor`). */
  isDone: boolean;
  /** The cursor of the page's last row (its start when empty): the next page's `cursor`. */
  continueCursor: Cursor | null;
}

/** The zod schema of a paginated entry's `page` argument: `args: { board: z.number(), page: paginationArgs }`. */
export const paginationArgs = z.object({
  cursor: z.string().max(4096).nullable(),
  numItems: z.number().int().min(1).max(1000),
  endCursor: z.string().max(4096).nullable().optional(),
});

export type OrderDirection = 'asc' | 'desc';

export interface PaginateOptions<O> {
  /**
   * The total order: columns of the rows (output names; `'t.id'` for a qualified one), each with its
   * direction. The last must be unique (`id`) so no two rows tie; every one must be non-null.
   */
  orderBy: ReadonlyArray<readonly [keyof O & string, OrderDirection] | readonly [string, OrderDirection]>;
}

const MAX_PAGE_ROWS_WITH_END = 10_000;

/**
 * Reads one page of `query` ordered by `orderBy`. `args` are the entry's args (with `page`): the
 * cursor is bound to the other args and to the order, so one issued for other args, another order or
 * forged answers `400 invalid_cursor` (the paginated hooks then start over from the first page).
 */
export async function paginate<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  options: PaginateOptions<O>,
  args: { readonly page: PaginationOptions },
): Promise<PaginationResult<O>> {
  const orderBy = options.orderBy.map(([column, direction]) => [String(column), direction] as const);
  if (orderBy.length === 0 || orderBy.some(([, direction]) => direction !== 'asc' && direction !== 'desc')) {
    throw new TypeError("fw: paginate({ orderBy }) needs at least one [column, 'asc' | 'desc'], e.g. orderBy: [['id', 'desc']].");
  }
  const { page } = args;
  const scope = scopeOf(orderBy, args);
  const start = page.cursor == null ? undefined : decodeCursor(page.cursor, scope, orderBy.length, 'page.cursor');
  const end = page.endCursor == null ? undefined : decodeCursor(page.endCursor, scope, orderBy.length, 'page.endCursor');

  // Untyped from here: the columns are the caller's, checked by PostgreSQL (and by orderBy's type).
  let q = query as unknown as SelectQueryBuilder<any, any, any>;
  if (start) q = q.where((eb) => keyset(eb, orderBy, start, 'after'));
  if (end) q = q.where((eb) => keyset(eb, orderBy, end, 'upTo'));
  for (const [column, direction] of orderBy) q = q.orderBy(column, direction);
  // The order columns' text forms (exact, whatever the type: a Date would lose timestamptz microseconds).
  q = q.select((eb) => orderBy.map(([column], i) => eb.cast(eb.ref(column), 'text').as(`__fw_cursor_${i}`)));
  const limit = end ? MAX_PAGE_ROWS_WITH_END + 1 : page.numItems + 1;
  const rows = (await q.limit(limit).execute()) as Array<Record<string, unknown>>;
  if (end && rows.length > MAX_PAGE_ROWS_WITH_END) {
    throw new FwError('bad_request', `A page held by its bounds grew past ${MAX_PAGE_ROWS_WITH_END} rows.`, {
      diagnostics: [{ path: 'page.endCursor', code: 'page_too_large', message: 'Too many rows between the page bounds.', hint: 'Reload the list (a new first page) to split it again.' }],
    });
  }
  const more = !end && rows.length > page.numItems;
  const kept = more ? rows.slice(0, page.numItems) : rows;
  const values = kept.map((row) => {
    const cursorValues = orderBy.map((_, i) => row[`__fw_cursor_${i}`]);
    for (let i = 0; i < orderBy.length; i++) delete row[`__fw_cursor_${i}`];
    return cursorValues;
  });
  const last = values.at(-1);
  if (last?.some((value) => typeof value !== 'string')) {
    const column = orderBy[last.findIndex((value) => typeof value !== 'string')]![0];
    throw new FwError('internal', `paginate: the order column "${column}" is null in a row; keyset pagination needs non-null order columns.`, {
      diagnostics: [{ path: 'orderBy', code: 'null_order_column', message: `"${column}" is null.`, hint: `Filter out nulls (where('${column}', 'is not', null)) or order by a non-null column.` }],
    });
  }
  return {
    page: kept as O[],
    // A page held by its bounds is never the last one the client loaded with a size.
    isDone: !end && !more,
    continueCursor: last ? encodeCursor(last as string[], scope) : end ? page.endCursor! : page.cursor,
  };
}

/**
 * `after`: rows strictly after the cursor in the order; `upTo`: rows up to and including it. The first
 * column's bound is AND-ed on its own (`a <= x AND (a < x OR (a = x AND …))`) so the live read set keeps
 * it as a range; the tie-breaking OR is dropped there (it only narrows rows inside that range).
 */
function keyset(eb: ExpressionBuilder<any, any>, orderBy: ReadonlyArray<readonly [string, OrderDirection]>, values: string[], side: 'after' | 'upTo'): Expression<SqlBool> {
  const strict = (direction: OrderDirection) => ((direction === 'desc') === (side === 'after') ? '<' : '>');
  const nested = (i: number): Expression<SqlBool> => {
    const [column, direction] = orderBy[i]!;
    if (i === orderBy.length - 1) return eb(column, side === 'after' ? strict(direction) : (`${strict(direction)}=` as '<=' | '>='), values[i]!);
    return eb.or([eb(column, strict(direction), values[i]!), eb.and([eb(column, '=', values[i]!), nested(i + 1)])]);
  };
  const [first, direction] = orderBy[0]!;
  if (orderBy.length === 1) return nested(0);
  return eb.and([eb(first, `${strict(direction)}=` as '<=' | '>=', values[0]!), nested(0)]);
}

/** What a cursor is bound to: the order and the entry's other args. A short FNV-1a hash (not a secret: a consistency check). */
function scopeOf(orderBy: ReadonlyArray<readonly [string, OrderDirection]>, args: object): string {
  const { page: _page, ...rest } = args as Record<string, unknown>;
  const text = canonicalJson([orderBy, rest]);
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash.toString(36);
}

export function encodeCursor(values: readonly string[], scope: string): Cursor {
  return Buffer.from(JSON.stringify({ s: scope, v: values })).toString('base64url');
}

function decodeCursor(cursor: string, scope: string, columns: number, path: string): string[] {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  const valid = (value: unknown): value is { s: string; v: string[] } =>
    typeof value === 'object' && value !== null && Array.isArray((value as { v?: unknown }).v) && (value as { v: unknown[] }).v.every((item) => typeof item === 'string');
  if (!valid(decoded) || decoded.v.length !== columns) {
    throw invalidCursor(path, 'The cursor is malformed.');
  }
  if (decoded.s !== scope) throw invalidCursor(path, 'The cursor belongs to other args or another order.');
  return decoded.v;
}

function invalidCursor(path: string, message: string): FwError {
  return new FwError('invalid_cursor', `${message} Start again from the first page (cursor: null).`, {
    diagnostics: [{ path, code: 'invalid_cursor', message, hint: 'Pass cursor: null to load the first page; usePaginatedLiveQuery does this by itself.' }],
  });
}
