import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { FwError } from '../core/errors.ts';

/**
 * An external entry's `argsSchema` (JSON Schema, draft 2020-12 unless its `$schema` names draft-07),
 * compiled once per entry. The bridge checks args against it before any call, so a service never sees
 * args its own manifest refuses, and the caller learns which field is wrong.
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
  if (!argsSchema) return;
  let validate: ValidateFunction;
  try {
    validate = validatorFor(argsSchema);
  } catch (error) {
    // Manifests are validated on import, so this is a manifest edited by hand afterwards.
    throw new FwError('internal', `${qualified}: its argsSchema is not a usable JSON Schema (${(error as Error).message}).`, {
      diagnostics: [{ path: 'entry.argsSchema', code: 'invalid_args_schema', message: (error as Error).message, hint: 'Fix the manifest, then run fw manifest validate.' }],
    });
  }
  if (validate(args)) return;
  throw new FwError('validation_failed', `${qualified}: the args do not match the entry's argsSchema.`, {
    diagnostics: (validate.errors ?? []).map((error) => ({ path: argsPath(error), code: error.keyword, message: error.message ?? 'is invalid' })),
  });
}

/** `/items/0/amount` (+ a missing property) → `args.items[0].amount`. */
function argsPath(error: ErrorObject): string {
  const parts = error.instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const missing = (error.params as { missingProperty?: string }).missingProperty;
  if (error.keyword === 'required' && missing !== undefined) parts.push(missing);
  const extra = (error.params as { additionalProperty?: string }).additionalProperty;
  if (error.keyword === 'additionalProperties' && extra !== undefined) parts.push(extra);
  return parts.reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : `${acc}.${part}`), 'args');
}
