/**
 * Functions a liveQuery calls, and whether fw can prove they read no table. A capture trigger logs
 * writes to the app's tables; a function that reads one (`board_label(grp)` selecting from `boards`)
 * hides that read from the query tree, so writes to it would never rerun the group. PostgreSQL's own
 * functions (those of `pg_catalog`) read no app table — save the few that run a query given as text —
 * so those are proven; any other function is refused like a view (`unmanaged_read`) unless the
 * liveQuery declares what it reads.
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

/** The called functions fw cannot prove read no table, given PostgreSQL's own function names. */
export function unprovenFunctions(called: Iterable<string>, builtins: ReadonlySet<string>): string[] {
  const unproven = new Set<string>();
  for (const raw of called) {
    const name = raw.toLowerCase();
    const [schema, bare] = name.includes('.') ? (name.split('.', 2) as [string, string]) : [undefined, name];
    const ownSchema = schema === undefined || schema === 'pg_catalog';
    // The clock's keywords and the conditional expressions (COALESCE, GREATEST, LEAST, NULLIF) are SQL
    // syntax (not in pg_proc) and read no table; so are `= any(…)`, `all(…)`, `some(…)` (Kysely's
    // `eb.fn.any`), whose subquery, if any, is a query node of its own.
    const syntax = schema === undefined && (bare === 'any' || bare === 'all' || bare === 'some');
    const builtin = syntax || (ownSchema && (CLOCK.has(bare) || CONDITIONAL_EXPRESSIONS.has(bare) || (builtins.has(bare) && !QUERYING_BUILTINS.has(bare))));
    if (!builtin) unproven.add(name);
  }
  return [...unproven].sort();
}

/** PostgreSQL's own function names (`pg_catalog`), read once per database: they never change under it. */
export async function loadBuiltinFunctions(db: FwDatabase): Promise<ReadonlySet<string>> {
  const { rows } = await sql<{ name: string }>`select distinct proname as name from pg_catalog.pg_proc where pronamespace = 'pg_catalog'::regnamespace`.execute(db.admin);
  return new Set(rows.map((row) => row.name));
}
