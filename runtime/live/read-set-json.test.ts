import { describe, expect, it } from 'vitest';
import type { ReadSet } from './read-set.ts';
import { readSetFromJson, readSetToJson } from './read-set-json.ts';

describe('read sets as text (what a cluster owner publishes with its result)', () => {
  it('round-trips every kind of condition: value sets, bigint bounds, tests and expressions', () => {
    const readSet: ReadSet = new Map([
      ['tickets', [{ conditions: [{ column: 'board', kind: 'in', values: new Set(['1', null]) }, { column: 'rank', kind: 'range', min: -9223372036854775808n, max: 10n }] }]],
      [
        'posts',
        [
          { conditions: [{ column: 'at', kind: 'test', type: 'timestamptz', text: 'bytes', test: { op: 'between', lower: { value: '2001-01-01T00:00:00Z', inclusive: true } } }] },
          { conditions: [{ column: 'n', kind: 'test', type: 'integer', text: 'bytes', of: { fn: '+', operand: 1n, constantFirst: false, bits: 32 }, test: { op: 'one-of', values: ['5'] } }] },
        ],
      ],
      ['boards', [{ conditions: [] }]],
    ] as unknown as Array<[string, ReadSet extends ReadonlyMap<string, infer A> ? A : never]>);
    const back = readSetFromJson(readSetToJson(readSet));
    expect(back).toEqual(readSet);
    const values = (back.get('tickets')![0]!.conditions[0] as { values: ReadonlySet<string | null> }).values;
    expect(values).toBeInstanceOf(Set);
    expect((back.get('tickets')![0]!.conditions[1] as { min: bigint }).min).toBe(-9223372036854775808n);
  });
});
