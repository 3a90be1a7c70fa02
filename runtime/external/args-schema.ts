import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { FwError } from '../core/errors.ts';

/**
 * An external entry's `argsSchema` and `resultSchema` (JSON Schema, draft 2020-12 unless its `$schema`
 * names draft-07), compiled once per entry. The bridge checks args against the first before any call,
 * so a service never sees args its own manifest refuses and the caller learns which field is wrong;
 * and the service's answer against the second, since a service's response is not trusted to be what
 * its manifest (and so the generated client's types) promise.
 */
const compiled = new WeakMap<Record<string, unknown>, ValidateFunction>();
let draft2020: Ajv2020 | undefined;
let draft07: Ajv | undefined;

function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    // strict: false — a service's schema may carry keywords of its own (examples, x-*), which are not errors.
    const options = { allErrors: true, strict: false } as const;
    const ajv = typeof schema.$schema === 'string' && schema.$schema.includes('draft-07') ? (draft07 ??= withFormats(new Ajv(options))) : (draft2020 ??= withFormats(new Ajv2020(options)));
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

function withFormats<T extends Ajv>(ajv: T): T {
  // ajv-formats is CommonJS: its default export arrives as the module under some loaders.
  const add = ((addFormats as unknown as { default?: unknown }).default ?? addFormats) as unknown as (ajv: Ajv) => Ajv;
  add(ajv);
  return ajv;
}

/** Why `schema` cannot be used as an argsSchema, or undefined when it compiles (for manifest validation). */
export function argsSchemaProblem(schema: Record<string, unknown>): string | undefined {
  try {
    validatorFor(schema);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * Throws a 400 `validation_failed` naming each wrong field (`args.amount`) when `args` do not satisfy the
 * entry's argsSchema; does nothing for an entry without one.
 */
export function assertExternalArgs(qualified: string, argsSchema: Record<string, unknown> | undefined, args: Record<string, unknown>): void {
  const errors = schemaErrors(qualified, 'argsSchema', argsSchema, args);
  if (errors.length === 0) return;
  throw new FwError('validation_failed', `${qualified}: the args do not match the entry's argsSchema.`, {
    diagnostics: errors.map((error) => ({ path: argsPath(error), code: error.keyword, message: error.message ?? 'is invalid' })),
  });
}

/**
 * Throws a 502 `bad_gateway` (`external_invalid_result`, naming each wrong field as `result.…`) when a
 * service's answer does not satisfy the entry's resultSchema; does nothing for an entry without one.
 */
export function assertExternalResult(qualified: string, resultSchema: Record<string, unknown> | undefined, result: unknown): void {
  const errors = schemaErrors(qualified, 'resultSchema', resultSchema, result);
  if (errors.length === 0) return;
  throw new FwError('bad_gateway', `${qualified}: the service answered with a result its manifest's resultSchema refuses.`, {
    diagnostics: errors.map((error) => ({
      path: argsPath(error, 'result'),
      code: 'external_invalid_result',
      message: error.message ?? 'is invalid',
      hint: 'Fix the service, or its manifest’s resultSchema (then fw manifest import it again).',
    })),
  });
}

/** What `value` breaks of the entry's `field` schema (none without one). */
function schemaErrors(qualified: string, field: 'argsSchema' | 'resultSchema', schema: Record<string, unknown> | undefined, value: unknown): ErrorObject[] {
  if (!schema) return [];
  let validate: ValidateFunction;
  try {
    validate = validatorFor(schema);
  } catch (error) {
    // Manifests are validated on import, so this is a manifest edited by hand afterwards.
    const code = field === 'argsSchema' ? 'invalid_args_schema' : 'invalid_result_schema';
    throw new FwError('internal', `${qualified}: its ${field} is not a usable JSON Schema (${(error as Error).message}).`, {
      diagnostics: [{ path: `entry.${field}`, code, message: (error as Error).message, hint: 'Fix the manifest, then run fw manifest validate.' }],
    });
  }
  return validate(value) ? [] : (validate.errors ?? []);
}

/** `/items/0/amount` (+ a missing property) → `args.items[0].amount`. */
function argsPath(error: ErrorObject, root = 'args'): string {
  const parts = error.instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const missing = (error.params as { missingProperty?: string }).missingProperty;
  if (error.keyword === 'required' && missing !== undefined) parts.push(missing);
  const extra = (error.params as { additionalProperty?: string }).additionalProperty;
  if (error.keyword === 'additionalProperties' && extra !== undefined) parts.push(extra);
  return parts.reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : `${acc}.${part}`), root);
}
