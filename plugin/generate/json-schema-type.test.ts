import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { argsType, jsonSchemaType, propertyKey } from './json-schema-type.ts';

/** Every printed type must parse as a type alias. */
function parses(type: string): string[] {
  const { diagnostics = [] } = ts.transpileModule(`type T = ${type};`, { reportDiagnostics: true });
  return diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

const cases: Array<[string, unknown, string]> = [
  ['string', { type: 'string', minLength: 1 }, 'string'],
  ['number', { type: 'number' }, 'number'],
  ['integer', { type: 'integer' }, 'number'],
  ['boolean', { type: 'boolean' }, 'boolean'],
  ['null', { type: 'null' }, 'null'],
  ['a string enum', { enum: ['low', 'normal', 'high'] }, "'low' | 'normal' | 'high'"],
  ['a mixed enum', { type: 'number', enum: [1, 2.5, -3, null, true] }, '1 | 2.5 | -3 | null | true'],
  ['an enum with an object', { enum: ['a', { b: 1 }] }, 'unknown'],
  ['a string const', { const: 'fixed' }, "'fixed'"],
  ['a number const', { const: 42 }, '42'],
  ['an array', { type: 'array', items: { type: 'string' } }, 'string[]'],
  ['an array of a union', { type: 'array', items: { type: ['string', 'number'] } }, '(string | number)[]'],
  ['an array without items', { type: 'array' }, 'unknown[]'],
  ['nested arrays', { type: 'array', items: { type: 'array', items: { enum: ['a', 'b'] } } }, "('a' | 'b')[][]"],
  ['a tuple', { type: 'array', items: [{ type: 'string' }] }, 'unknown[]'],
  ['a type list', { type: ['string', 'null'] }, 'string | null'],
  ['anyOf', { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'string' }] }, 'string | number'],
  ['oneOf', { oneOf: [{ const: 'a' }, { type: 'array', items: { type: 'boolean' } }] }, "'a' | boolean[]"],
  ['a union with unknown', { anyOf: [{ type: 'string' }, { $ref: '#/x' }] }, 'unknown'],
  ['a union with false', { anyOf: [{ type: 'string' }, false] }, 'string'],
  ['true', true, 'unknown'],
  ['false', false, 'never'],
  ['{}', {}, 'unknown'],
  ['$ref', { $ref: '#/$defs/x' }, 'unknown'],
  ['allOf', { allOf: [{ type: 'string' }] }, 'unknown'],
  ['an unknown type', { type: 'date' }, 'unknown'],
  ['not a schema', 'string', 'unknown'],
  [
    'an object with required and optional properties',
    { type: 'object', properties: { subject: { type: 'string' }, priority: { enum: ['low', 'high'] } }, required: ['subject'] },
    "{ subject: string; priority?: 'low' | 'high' }",
  ],
  ['an object without properties', { type: 'object' }, '{ [key: string]: unknown }'],
  ['a closed empty object', { type: 'object', additionalProperties: false }, 'Record<string, never>'],
  ['an object with an additionalProperties schema', { type: 'object', additionalProperties: { type: 'number' } }, '{ [key: string]: number }'],
  [
    'properties next to an index signature',
    { type: 'object', properties: { a: { type: 'string' }, b: { type: 'boolean' } }, required: ['a'], additionalProperties: { type: 'number' } },
    '{ a: string; b?: boolean; [key: string]: number | string | boolean | undefined }',
  ],
  ['properties with additionalProperties: true', { properties: { a: { type: 'string' } }, additionalProperties: true }, '{ a?: string; [key: string]: unknown }'],
  ['a required name without a schema', { type: 'object', required: ['id'] }, '{ id: unknown; [key: string]: unknown }'],
  [
    'nested objects',
    { type: 'object', properties: { tags: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } }, required: ['tags'] },
    '{ tags: { name: string }[] }',
  ],
  [
    'keys that are not identifiers',
    { type: 'object', properties: { 'x-trace': { type: 'string' }, "it's": { const: "a'b\\c\n" }, $ok: { type: 'null' }, '1st': { type: 'number' } } },
    "{ 'x-trace'?: string; 'it\\'s'?: 'a\\'b\\\\c\\n'; $ok?: null; '1st'?: number }",
  ],
  ['a nullable object', { type: ['object', 'null'], properties: { a: { type: 'string' } }, required: ['a'] }, '{ a: string } | null'],
];

describe('jsonSchemaType', () => {
  it.each(cases)('%s', (_, schema, expected) => {
    const type = jsonSchemaType(schema);
    expect(type).toBe(expected);
    expect(parses(type)).toEqual([]);
  });

  it('is deterministic: the same schema gives the same text', () => {
    const schema = { type: 'object', properties: { b: { type: 'string' }, a: { anyOf: [{ type: 'number' }, { type: 'null' }] } } };
    expect(jsonSchemaType(structuredClone(schema))).toBe(jsonSchemaType(schema));
  });
});

describe('argsType', () => {
  it('is a free-form record without a schema', () => {
    expect(argsType(null)).toBe('Record<string, unknown>');
    expect(argsType({ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] })).toBe('{ id: string }');
  });
});

describe('propertyKey', () => {
  it('quotes what is not an identifier', () => {
    expect(['title', '_x', '$y', 'support-desk', 'a b', ''].map(propertyKey)).toEqual(['title', '_x', '$y', "'support-desk'", "'a b'", "''"]);
  });
});
