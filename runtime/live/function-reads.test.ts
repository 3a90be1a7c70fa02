import { describe, expect, it } from 'vitest';
import { createDatabase } from '../db/database.ts';
import { sql } from 'kysely';
import { functionsInText, loadFunctionCatalog, newlyShadowed, unprovenFunctions } from './function-reads.ts';

describe('functions a liveQuery calls', () => {
  it('finds the calls in raw SQL text, not SQL syntax, strings or casts', () => {
    expect(functionsInText(`board_label(grp) = 'x(y)' and lower(title) in ($1, $2) and coalesce(a, b) > 0`)).toEqual(['board_label', 'lower']);
    expect(functionsInText(`extract(epoch from created_at) > 0 and exists (select 1) and "App"."Label" (x) and x::date = any($1)`)).toEqual(['app.label']);
    expect(functionsInText('count(*) over (partition by grp order by id) filter (where ok)')).toEqual(['count']);
  });

  it('proves only PostgreSQL’s own functions, save those that run a query given as text', () => {
    const catalog = { builtins: new Set(['lower', 'count', 'now', 'query_to_xml', 'area']), shadowed: new Set(['board_label', 'area']) };
    expect(unprovenFunctions(['lower', 'COUNT', 'pg_catalog.now', 'board_label', 'public.lower', 'query_to_xml'], catalog)).toEqual(['board_label', 'public.lower', 'query_to_xml']);
    // `= any($1)` (Kysely's eb.fn.any) is SQL syntax: it reads no table.
    expect(unprovenFunctions(['any', 'ALL', 'some', 'public.any'], catalog)).toEqual(['public.any']);
    // A built-in's name that another function carries too: a bare call may resolve to either.
    expect(unprovenFunctions(['area', 'pg_catalog.area'], catalog)).toEqual(['area']);
  });

  it('reads PostgreSQL’s own function names from the database, and proves SQL’s conditional expressions', async () => {
    const db = await createDatabase({ dataDir: 'memory://' });
    try {
      const catalog = await loadFunctionCatalog(db);
      for (const name of ['lower', 'count', 'now', 'date_trunc', 'jsonb_build_object', 'string_agg', 'area']) expect(catalog.builtins.has(name), name).toBe(true);
      expect(catalog.builtins.has('board_label')).toBe(false);
      // SQL's conditional expressions, which Kysely builds as calls (eb.fn.coalesce), are no pg_proc
      // functions: proven all the same (the live path property test found them refused).
      for (const name of ['coalesce', 'greatest', 'least', 'nullif']) expect(catalog.builtins.has(name), name).toBe(false);
      expect(unprovenFunctions(['coalesce', 'GREATEST', 'least', 'pg_catalog.nullif', 'public.coalesce', 'area', 'lower'], catalog)).toEqual(['public.coalesce']);

      // An app's area(integer): the name is no longer proof of a built-in (pg_catalog's area is still).
      await sql.raw(`create function area(n integer) returns integer language sql stable as 'select n'`).execute(db.admin);
      const after = await loadFunctionCatalog(db);
      expect(newlyShadowed(catalog, after)).toBe(true);
      expect(newlyShadowed(after, after)).toBe(false);
      expect(unprovenFunctions(['area', 'pg_catalog.area', 'lower'], after)).toEqual(['area']);
    } finally {
      await db.close();
    }
  });
});
