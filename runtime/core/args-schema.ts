import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';

/** An entry's args as JSON Schema, or why there is none. */
export type ArgsSchema =
  | { kind: 'json-schema'; schema: Record<string, unknown> }
  | { kind: 'unavailable'; severity: 'info' | 'warning'; reason: string };

/**
 * The JSON Schema of what callers send (the input side, before defaults and transforms), through the
 * Standard JSON Schema extension (zod 4 implements it; fw's `z` is zod 4). Schemas from libraries without
 * it give `unavailable` (info); schemas that cannot be expressed in JSON Schema give `unavailable` (warning).
 *
 * @example
 *   argsJsonSchema(z.object({ title: z.string().min(1) }))
 *   // { kind: 'json-schema', schema: { type: 'object', properties: { title: { type: 'string', minLength: 1 } }, … } }
 */
export function argsJsonSchema(schema: StandardSchemaV1): ArgsSchema {
  const props = schema['~standard'] as StandardSchemaV1.Props & Partial<StandardJSONSchemaV1.Props>;
  if (typeof props.jsonSchema?.input !== 'function') {
    return {
      kind: 'unavailable',
      severity: 'info',
      reason: `its args schema (${props.vendor}) offers no JSON Schema (Standard JSON Schema), so api.json records "args": null.`,
    };
  }
  try {
    return { kind: 'json-schema', schema: props.jsonSchema.input({ target: 'draft-2020-12' }) };
  } catch (error) {
    return {
      kind: 'unavailable',
      severity: 'warning',
      reason: `its args cannot be expressed as JSON Schema (${error instanceof Error ? error.message : String(error)}), so api.json records "args": null.`,
    };
  }
}
