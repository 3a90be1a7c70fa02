/**
 * Functions a liveQuery calls, and whether fw can prove they read no table. A capture trigger logs
 * writes to the app's tables; a function that reads one (`board_label(grp)` selecting from `boards`)
 * hides that read from the query tree, so writes to it would never rerun the group. PostgreSQL's own
 * functions (those of `pg_catalog` that came with the server) read no app table — save the few that run
 * a query given as text — so those are proven; any other function is refused like a view
 * (`unmanaged_read`) unless the liveQuery declares what it reads.
 *
 * A call names a function, but PostgreSQL picks the one it runs by name AND argument types among every
 * schema on the search path: an app's `area(integer)` wins over pg_catalog's geometric `area(box)` for
 * an integer argument. So a name is proven by the identity of every function that carries it — all of
 * them built in (schema pg_catalog, OID below FirstNormalObjectId, i.e. made by initdb, not since) —
 * never by the name alone.
 */
import { sql } from 'kysely';
import type { FwDatabase } from '../db/database.ts';

/** PostgreSQL's functions that run SQL handed to them as text, or read whole relations by name. */
const QUERYING_BUILTINS = new Set([
  'query_to_xml',
  'query_to_xmlschema',
  'query_to_xml_and_xmlschema',
  'table_to_xml',
  'table_to_xmlschema',
  'table_to_xml_and_xmlschema',
  'cursor_to_xml',
  'cursor_to_xmlschema',
  'schema_to_xml',
  'schema_to_xmlschema',
  'schema_to_xml_and_xmlschema',
  'database_to_xml',
  'database_to_xmlschema',
  'database_to_xml_and_xmlschema',
  'ts_stat',
]);

/**
 * What reads the clock: functions, and SQL's value keywords (no parentheses). A liveQuery that uses one
 * answers differently as time passes with no write to rerun it, so it must declare `refreshMs`.
 */
const CLOCK = new Set(['now', 'clock_timestamp', 'statement_timestamp', 'transaction_timestamp', 'timeofday', 'current_date', 'current_time', 'current_timestamp', 'localtime', 'localtimestamp']);
const CLOCK_KEYWORDS = /\b(current_date|current_time|current_timestamp|localtime|localtimestamp)\b/gi;

/**
 * SQL's conditional expressions: syntax that Kysely builds as a function call (`eb.fn.coalesce(…)`),
 * with no entry in pg_proc. They read no table.
 */
const CONDITIONAL_EXPRESSIONS = new Set(['coalesce', 'greatest', 'least', 'nullif']);

/** SQL's own syntax that looks like a call in raw text (`in (…)`, `coalesce(…)`, `over (…)`). */
const SYNTAX = new Set([
  'all', 'and', 'any', 'array', 'as', 'between', 'case', 'cast', 'coalesce', 'cube', 'distinct', 'else', 'end', 'exists', 'extract',
  'filter', 'from', 'greatest', 'grouping', 'having', 'in', 'interval', 'is', 'lateral', 'least', 'like', 'ilike', 'not', 'nullif', 'on',
  'or', 'over', 'overlay', 'partition', 'position', 'rollup', 'row', 'sets', 'similar', 'some', 'substring', 'then', 'trim', 'using',
  'values', 'when', 'where', 'with', 'within', 'by', 'select', 'table', 'returning', 'limit', 'offset', 'order', 'group', 'join',
]);

/** The names of functions a raw SQL fragment calls (`board_label(grp)` → `board_label`). */
export function functionsInText(text: string): string[] {
  // Strings and quoted identifiers hold no calls.
  const code = text.replace(/'(?:[^']|'')*'/g, "''");
  const names: string[] = [];
  const part = '(?:"[^"]+"|[A-Za-z_][A-Za-z0-9_$]*)';
  for (const match of code.matchAll(new RegExp(`(?<![A-Za-z0-9_$."])(${part}(?:\\.${part})?)\\s*\\(`, 'g'))) {
    const name = match[1]!.replaceAll('"', '').toLowerCase();
    if (!SYNTAX.has(name)) names.push(name);
  }
  for (const match of code.matchAll(CLOCK_KEYWORDS)) names.push(match[1]!.toLowerCase());
  return names;
}

/** The clock reads among the called functions (`now`, `current_date`, …), sorted. */
export function clockReads(called: Iterable<string>): string[] {
  return [...new Set([...called].map((name) => name.toLowerCase().replace(/^pg_catalog\./, '')).filter((name) => CLOCK.has(name)))].sort();
}

/** The clock's value keywords: SQL syntax, no function of pg_proc (an app cannot shadow them). */
const CLOCK_SYNTAX = new Set(['current_date', 'current_time', 'current_timestamp', 'localtime', 'localtimestamp']);

/**
 * What the database's functions are, by identity: `builtins`, the names of pg_catalog's functions that
 * came with the server; `shadowed`, the names some other function also carries (any schema, or a
 * function added to pg_catalog later), which an unqualified call may resolve to.
 */
export interface FunctionCatalog {
  readonly builtins: ReadonlySet<string>;
  readonly shadowed: ReadonlySet<string>;
}

export const EMPTY_FUNCTION_CATALOG: FunctionCatalog = { builtins: new Set(), shadowed: new Set() };

/** The called functions fw cannot prove read no table, given the database's functions (loadFunctionCatalog). */
export function unprovenFunctions(called: Iterable<string>, catalog: FunctionCatalog): string[] {
  const unproven = new Set<string>();
  for (const raw of called) {
    const name = raw.toLowerCase();
    const [schema, bare] = name.includes('.') ? (name.split('.', 2) as [string, string]) : [undefined, name];
    // The clock's keywords and the conditional expressions (COALESCE, GREATEST, LEAST, NULLIF) are SQL
    // syntax (not in pg_proc, whatever functions share their name) and read no table; so are `= any(…)`,
    // `all(…)`, `some(…)` (Kysely's `eb.fn.any`), whose subquery, if any, is a query node of its own.
    const syntax =
      (schema === undefined && (bare === 'any' || bare === 'all' || bare === 'some')) ||
      ((schema === undefined || schema === 'pg_catalog') && (CLOCK_SYNTAX.has(bare) || CONDITIONAL_EXPRESSIONS.has(bare)));
    // `pg_catalog.x(…)` can only be pg_catalog's; a bare `x(…)` may be any schema's `x` on the path.
    const builtin = catalog.builtins.has(bare) && !QUERYING_BUILTINS.has(bare) && (schema === 'pg_catalog' ? !catalog.shadowed.has(name) : schema === undefined && !catalog.shadowed.has(bare));
    if (!syntax && !builtin) unproven.add(name);
  }
  return [...unproven].sort();
}

/**
 * The database's functions by identity (FunctionCatalog). Built-ins never change under a server;
 * `shadowed` changes when a function is created, so the hub reads it again (see hub.ts).
 */
export async function loadFunctionCatalog(db: FwDatabase): Promise<FunctionCatalog> {
  // 16384 is FirstNormalObjectId: every OID below it was assigned by initdb (PostgreSQL's own objects).
  const { rows } = await sql<{ name: string; builtin: boolean; catalog: boolean }>`
    select distinct proname as name, pronamespace = 'pg_catalog'::regnamespace as catalog, (pronamespace = 'pg_catalog'::regnamespace and oid < 16384) as builtin
      from pg_catalog.pg_proc`.execute(db.admin);
  const shadowed = new Set<string>();
  for (const row of rows) {
    if (row.builtin) continue;
    shadowed.add(row.name);
    // Added to pg_catalog since initdb (an extension's, a superuser's): even `pg_catalog.x(…)` may be it.
    if (row.catalog) shadowed.add(`pg_catalog.${row.name}`);
  }
  return { builtins: new Set(rows.filter((row) => row.builtin).map((row) => row.name)), shadowed };
}

/** True when a function now shares a built-in's name that it did not before: a call proven before may not be. */
export function newlyShadowed(before: FunctionCatalog, after: FunctionCatalog): boolean {
  for (const name of after.shadowed) if (!before.shadowed.has(name) && after.builtins.has(name.replace(/^pg_catalog\./, ''))) return true;
  return false;
}
