import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrl } from '../../e2e/support/postgres.ts';
import { dollarQuoted, inlineParameters } from './inline-parameters.ts';

/** The inlined text with its tags replaced by `$T$`, to compare with expectations. */
const shape = (text: string | undefined) => text?.replaceAll(/\$fw\d*\$/g, '$T$');

describe('inlineParameters', () => {
  it.each([
    ['select * from "t" where "a" = $1', ['x'], 'select * from "t" where "a" =  $T$x$T$ '],
    ['select $1, $2, $3, $4, $5', [1.5, true, 10n, null, undefined], 'select  $T$1.5$T$ ,  $T$true$T$ ,  $T$10$T$ ,  null ,  null '],
    ['select "a$1" from "t" where "b" in ($1, $2)', ['x', 'y'], 'select "a$1" from "t" where "b" in ( $T$x$T$ ,  $T$y$T$ )'],
    [`select 'it''s $1; ', $1`, ['v'], `select 'it''s $1; ',  $T$v$T$ `],
    ['select $x$ $1 $x$, $1 /* $2 /* nested */ $3 */ -- $4\n', ['v'], 'select $x$ $1 $x$,  $T$v$T$  /* $2 /* nested */ $3 */ -- $4\n'],
    ['select "t"."x" from "t" limit $1', [10], 'select "t"."x" from "t" limit  $T$10$T$ '],
  ])('inlines %j', (sql, parameters, expected) => {
    expect(shape(inlineParameters({ sql, parameters }))).toBe(expected);
  });

  it.each([
    ['a backslash anywhere', `select E'\\n', $1`, ['v']],
    ['a placeholder glued to an identifier', 'select a$1', ['v']],
    ['a placeholder followed by identifier characters', 'select $1a', ['v']],
    ['an unterminated string', "select 'x, $1", ['v']],
    ['an unterminated comment', 'select /* $1', ['v']],
    ['a line comment without its end', 'select 1 -- $1', ['v']],
    ['an unterminated dollar quote', 'select $q$ $1', ['v']],
    ['a lone $', 'select $ + $1', ['v']],
    ['a second statement', 'select $1; delete from "t"', ['v']],
    ['placeholders out of order', 'select $2, $1', ['a', 'b']],
    ['a placeholder twice', 'select $1, $1', ['a']],
    ['fewer placeholders than values', 'select $1', ['a', 'b']],
    ['a date', 'select $1', [new Date(0)]],
    ['an array', 'select $1', [[1, 2]]],
    ['an object', 'select $1', [{ a: 1 }]],
    ['a buffer', 'select $1', [Buffer.from('x')]],
    ['a NUL in a value', 'select $1', ['a\0b']],
    ['NaN', 'select $1', [Number.NaN]],
  ])('refuses %s', (_what, sql, parameters) => {
    expect(inlineParameters({ sql, parameters })).toBeUndefined();
  });

  it('picks a tag that occurs in no value', () => {
    expect(inlineParameters({ sql: 'select $1, $2', parameters: ['$fw$ $$', "' \" -- /* $fw1$"] })).toBe(`select  $fw2$$fw$ $$$fw2$ ,  $fw2$' " -- /* $fw1$$fw2$ `);
    expect(dollarQuoted('a$fw$b')).toBe('$fw1$a$fw$b$fw1$');
    // A tag that would begin inside the text ends it early just the same.
    expect(dollarQuoted('abc$fw')).toBe('$fw1$abc$fw$fw1$');
    expect(dollarQuoted('abc$f')).toBe('$fw$abc$f$fw$');
  });
});

describe.skipIf(!testDatabaseUrl)('inlined statements on PostgreSQL mean what the parameterised ones mean', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: testDatabaseUrl });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
  });

  const hostile = ['ends with $fw', 'ends with $fw1', 'ends with $', `it's`, 'back\\slash', 'two\\\\', "\\'; select 1; --", '$$', '$fw$', '*/ select 1 /*', 'line\nbreak -- x', 'ünïcødé ✓ 𝄞', '', ' ', 'null'];

  it.each([
    // Each value lands where a parameter of unknown type would: compared as text, as a column type, in IN, LIMIT, a function.
    ['select $1::text as v', hostile.map((v) => [v])],
    ['select $1 = $2 as eq, length($3) as n', [['a', 'a', 'abc'], ['a', 'b', '']]],
    ['select x from (values (1), (2), (3)) as t(x) where x in ($1, $2) order by x limit $3', [[1, 3, 5], ['2', 3, 1]]],
    ['select $1::int + 1 as n, $2::numeric as d, $3::bool as b, $4::bigint as big', [[41, '1.50', true, 9007199254740993n], [-1, 0.1, false, 0]]],
    ['select coalesce($1, $2) as v, $3::jsonb ->> $4 as j', [[null, 'fallback', '{"k":"v"}', 'k'], ['first', null, '{"0":"zero"}', 0]]],
    ["select x from (values (1), (2), (3)) as t(x) where x = any($1) and x between $2 and $3 order by x", [['{1,3}', 0, 3], ['{2}', '2', '2']]],
    ["select s from (values ('abc'), ('abd'), ('x')) as t(s) where s like $1 or s = $2 order by s", [['ab%', 'x'], ['%d', null]]],
    ['select case when $1 then $2 else $3 end as v, date_trunc($4, $5::timestamptz) as d', [[true, 'yes', 'no', 'day', '2026-11-26T10:11:12Z'], [false, 1, 2, 'month', '2026-11-26']]],
    ['select x from (values (1), (2)) as t(x) where exists (select 1 where x = $1) or x > $2', [[1, 5], [7, 1]]],
  ])('%s', async (sql, runs) => {
    for (const parameters of runs as unknown[][]) {
      const expected = await client.query(sql, parameters);
      const inlined = inlineParameters({ sql, parameters })!;
      expect(inlined).toBeDefined();
      const actual = await client.query(inlined);
      expect(actual.rows).toEqual(expected.rows);
      expect(actual.fields.map((f) => [f.name, f.dataTypeID])).toEqual(expected.fields.map((f) => [f.name, f.dataTypeID]));
    }
  });

  it('a value ends where its tag says even when the session lexes strings the old way', async () => {
    // What SQL injection in an earlier request could leave in a pooled session before the next prelude resets it.
    await client.query(`set standard_conforming_strings = off; set backslash_quote = on; set escape_string_warning = off`);
    try {
      for (const value of hostile) {
        const rows = (await client.query(inlineParameters({ sql: 'select $1::text as v, 1 as one', parameters: [value] })!)).rows;
        expect(rows).toEqual([{ v: value, one: 1 }]);
      }
    } finally {
      await client.query('reset all');
    }
  });
});
