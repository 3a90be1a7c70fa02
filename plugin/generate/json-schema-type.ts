/**
 * JSON Schema → TypeScript type source, for the args of external entries in the generated api.ts.
 * It covers what manifests use for args — objects, scalars, enums, consts, arrays, unions, index
 * signatures — and gives `unknown` for anything else (`$ref`, `allOf`, tuples, …), so the type is
 * never narrower than the schema.
 */

/** A type as its union members, each printable on its own; `['unknown']` absorbs everything. */
type Members = readonly string[];

const unknownType: Members = ['unknown'];

/**
 * The TypeScript type of the values `schema` accepts, as one line of source. Object properties keep
 * the schema's order, so the same schema always gives the same text.
 *
 * @example
 *   jsonSchemaType({ type: 'object', properties: { subject: { type: 'string' }, priority: { enum: ['low', 'high'] } }, required: ['subject'] })
 *   // "{ subject: string; priority?: 'low' | 'high' }"
 */
export function jsonSchemaType(schema: unknown): string {
  return print(convert(schema));
}

/**
 * The args type of an external entry: the type of its manifest's `argsSchema`, or
 * `Record<string, unknown>` when it has none.
 *
 * @example
 *   argsType(null) // 'Record<string, unknown>'
 */
export function argsType(schema: Record<string, unknown> | null): string {
  return schema === null ? 'Record<string, unknown>' : jsonSchemaType(schema);
}

/** A property key of a type literal: bare when it is an identifier, quoted otherwise. */
export function propertyKey(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : stringLiteral(name);
}

function convert(schema: unknown): Members {
  if (schema === false) return ['never'];
  if (!isRecord(schema)) return unknownType;
  if ('const' in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.map(literal));
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) return union(alternatives.map(convert));
  if (Array.isArray(schema.type)) return union(schema.type.map((type) => ofType(type, schema)));
  if (schema.type !== undefined) return ofType(schema.type, schema);
  if ('properties' in schema || 'additionalProperties' in schema || 'required' in schema) return ofType('object', schema);
  if ('items' in schema) return ofType('array', schema);
  return unknownType;
}

function ofType(type: unknown, schema: Record<string, unknown>): Members {
  switch (type) {
    case 'string':
    case 'boolean':
    case 'null':
      return [type];
    case 'number':
    case 'integer':
      return ['number'];
    case 'array': {
      // A tuple's `items` array (draft 4–2019) or `prefixItems` would need more than T[]: left unknown.
      const element = schema.items === undefined ? unknownType : Array.isArray(schema.items) ? unknownType : convert(schema.items);
      return [element.length === 1 ? `${element[0]}[]` : `(${print(element)})[]`];
    }
    case 'object':
      return [objectType(schema)];
    default:
      return unknownType;
  }
}

function objectType(schema: Record<string, unknown>): string {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  // Required names the schema does not describe must still be present, with any value.
  const names = [...Object.keys(properties), ...[...required].filter((name) => !Object.hasOwn(properties, name))];
  const members: string[] = [];
  const valueTypes: Members[] = [];
  for (const name of names) {
    const optional = !required.has(name);
    const type = Object.hasOwn(properties, name) ? convert(properties[name]) : unknownType;
    members.push(`${propertyKey(name)}${optional ? '?' : ''}: ${print(type)}`);
    valueTypes.push(optional ? union([type, ['undefined']]) : type);
  }
  // Without additionalProperties, a schema with properties reads as closed (so typos are type errors),
  // one without any as a free-form object.
  const extra = schema.additionalProperties ?? Object.keys(properties).length === 0;
  if (extra !== false) {
    // TypeScript requires every property to fit the index signature.
    members.push(`[key: string]: ${print(union([convert(extra), ...valueTypes]))}`);
  } else if (members.length === 0) {
    return 'Record<string, never>';
  }
  return `{ ${members.join('; ')} }`;
}

function literal(value: unknown): Members {
  if (typeof value === 'string') return [stringLiteral(value)];
  if (typeof value === 'number' && Number.isFinite(value)) return [String(value)];
  if (typeof value === 'boolean' || value === null) return [String(value)];
  return unknownType;
}

/** The members of several types, first occurrence first; `unknown` absorbs the rest, `never` drops out. */
function union(types: readonly Members[]): Members {
  const members = new Set(types.flat());
  if (members.has('unknown')) return unknownType;
  members.delete('never');
  return members.size === 0 ? ['never'] : [...members];
}

function print(members: Members): string {
  return members.join(' | ');
}

/** A single-quoted TypeScript string literal of `text`, escapes included. */
function stringLiteral(text: string): string {
  // JSON's escapes are valid TypeScript; only the quotes change.
  const body = JSON.stringify(text).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'");
  return `'${body}'`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
