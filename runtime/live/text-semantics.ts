/**
 * What fw may assume about text in this database when it keeps a condition that orders or folds text
 * (`title >= 'm'`, `lower(title) = 'x'`, ILIKE). Equality and LIKE need nothing: every database default
 * collation is deterministic (equal = same bytes) and LIKE matches characters. Ordering and case follow
 * the database's collation and character classes, which fw can only reproduce for a few:
 *
 * - order `bytes`: collation `C`/`POSIX` (libc), or the builtin provider (PostgreSQL 17+: C, C.UTF-8,
 *   PG_UNICODE_FAST all sort by code point) — UTF-8 byte order, exactly.
 * - order `ascii`: libc `C.UTF-8` — byte order for ASCII strings (what every glibc C.UTF-8 does); a
 *   comparison involving anything else is not decided (the row counts as matching).
 * - lower `all`: character classes `C`/`POSIX` (libc) or builtin `C`: lower() maps A–Z only, for every
 *   string. lower `ascii`: libc or builtin `C.UTF-8`, builtin `PG_UNICODE_FAST`: exact for ASCII strings.
 * - anything else (ICU, `en_US.UTF-8`, …): `none`, and such conditions stay coarse.
 *
 * A column whose collation is not the database default (hand-written SQL) gets none of it, LIKE included
 * (PostgreSQL 18 matches LIKE through nondeterministic collations). Read once when the hub starts.
 */
import { sql } from 'kysely';
import type { FwDatabase } from '../db/database.ts';
import type { TextOrder } from './value-order.ts';

export interface TextSemantics {
  readonly order: TextOrder;
  readonly lower: 'all' | 'ascii' | 'none';
  /** `table.column` of columns with a collation of their own: only equality is kept for them. */
  readonly ownCollation: ReadonlySet<string>;
}

/** Before the database was asked: assume nothing. */
export const UNKNOWN_TEXT_SEMANTICS: TextSemantics = { order: 'none', lower: 'none', ownCollation: new Set() };

export function textSemanticsOf(provider: string | undefined, collate: string | undefined, ctype: string | undefined, locale: string | undefined): Pick<TextSemantics, 'order' | 'lower'> {
  const c = (name: string | undefined) => name === 'C' || name === 'POSIX';
  const cUtf8 = (name: string | undefined) => name === 'C.UTF-8' || name === 'C.utf8';
  if (provider === undefined || provider === 'c') {
    return {
      order: c(collate) ? 'bytes' : cUtf8(collate) ? 'ascii' : 'none',
      lower: c(ctype) ? 'all' : cUtf8(ctype) ? 'ascii' : 'none',
    };
  }
  if (provider === 'b') {
    if (c(locale)) return { order: 'bytes', lower: 'all' };
    if (cUtf8(locale) || locale === 'PG_UNICODE_FAST') return { order: 'bytes', lower: 'ascii' };
  }
  return { order: 'none', lower: 'none' };
}

export async function loadTextSemantics(db: FwDatabase): Promise<TextSemantics> {
  // to_jsonb: the columns differ between versions (datlocprovider since 15, datlocale since 17).
  const database = await sql<{ row: Record<string, string | null> }>`select to_jsonb(d) as row from pg_catalog.pg_database d where d.datname = current_database()`.execute(db.admin);
  const row = database.rows[0]?.row ?? {};
  const columns = await sql<{ name: string }>`
    select c.relname || '.' || a.attname as name
    from pg_catalog.pg_attribute a join pg_catalog.pg_class c on c.oid = a.attrelid join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind = 'r' and a.attnum > 0 and not a.attisdropped
      and a.attcollation <> 0 and a.attcollation <> 'pg_catalog.default'::regcollation`.execute(db.admin);
  const semantics = textSemanticsOf(row.datlocprovider ?? undefined, row.datcollate ?? undefined, row.datctype ?? undefined, (row.datlocale ?? row.daticulocale) ?? undefined);
  return { ...semantics, ownCollation: new Set(columns.rows.map((column) => column.name)) };
}
