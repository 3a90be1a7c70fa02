import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.ts';

describe('canonicalJson', () => {
  it('sorts object keys at every depth, keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: [3, { z: 1, y: 2 }] } })).toBe('{"a":{"c":[3,{"y":2,"z":1}],"d":2},"b":1}');
    expect(canonicalJson({ b: 1, a: 2 })).toBe(canonicalJson({ a: 2, b: 1 }));
  });

  it('sorts every key as text, digits too (JSON.stringify would put integer keys first)', () => {
    expect(canonicalJson({ 9: 'a', 10: 'b', x: 'c' })).toBe('{"10":"b","9":"a","x":"c"}');
  });

  it('is JSON.stringify otherwise: toJSON, undefined and functions dropped, null in arrays', () => {
    expect(canonicalJson({ at: new Date('2026-01-02T03:04:05.000Z'), gone: undefined, fn: () => 1 })).toBe('{"at":"2026-01-02T03:04:05.000Z"}');
    expect(canonicalJson([undefined, () => 1, null, 'x'])).toBe('[null,null,null,"x"]');
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson('a"b')).toBe('"a\\"b"');
    expect(canonicalJson({ nested: { toJSON: () => ({ b: 2, a: 1 }) } })).toBe('{"nested":{"a":1,"b":2}}');
  });

  it('gives a schema the text its stored checksum was made from', () => {
    // _fw_migrations keeps sha256 of this text: a change here would make every database look migrated by someone else.
    const spec = { kind: 'uuid', nullable: false, primaryKey: true, unique: false, default: { kind: 'random_uuid' } };
    expect(canonicalJson([['notes', true, [['id', spec]], undefined]])).toBe(
      '[["notes",true,[["id",{"default":{"kind":"random_uuid"},"kind":"uuid","nullable":false,"primaryKey":true,"unique":false}]],null]]',
    );
  });
});
