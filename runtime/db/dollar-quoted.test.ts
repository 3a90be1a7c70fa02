import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrl } from '../../e2e/support/postgres.ts';
import { dollarQuoted } from './dollar-quoted.ts';

describe('dollarQuoted', () => {
  it.each([
    ["it's", "$fw$it's$fw$"],
    ['', '$fw$$fw$'],
    ['a$fw$b', '$fw1$a$fw$b$fw1$'],
    ['$fw$ and $fw1$', '$fw2$$fw$ and $fw1$$fw2$'],
    // A tag that would begin inside the text ends it early just the same.
    ['abc$fw', '$fw1$abc$fw$fw1$'],
    ['abc$f', '$fw$abc$f$fw$'],
  ])('quotes %j', (text, expected) => {
    expect(dollarQuoted(text)).toBe(expected);
  });
});

describe.skipIf(!testDatabaseUrl)('dollar-quoted literals on PostgreSQL', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: testDatabaseUrl });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
  });

  const hostile = ['ends with $fw', 'ends with $fw1', 'ends with $', `it's`, 'back\\slash', 'two\\\\', "\\'; select 1; --", '$$', '$fw$', '*/ select 1 /*', 'line\nbreak -- x', 'ünïcødé ✓ 𝄞', '', ' ', 'null'];

  it('each value comes back whole, also when the session lexes strings the old way', async () => {
    for (const settings of ['reset all', 'set standard_conforming_strings = off; set backslash_quote = on; set escape_string_warning = off']) {
      await client.query(settings);
      try {
        for (const value of hostile) {
          // In one message with other statements, as in the prelude.
          const results = (await client.query(`select 1; select ${dollarQuoted(value)}::text as v, 2 as two`)) as unknown as pg.QueryResult[];
          expect(results.map((result) => result.rows)).toEqual([[{ '?column?': 1 }], [{ v: value, two: 2 }]]);
        }
      } finally {
        await client.query('reset all');
      }
    }
  });
});
