import type { StandardSchemaV1 } from '@standard-schema/spec';
import { type Diagnostic, FwError } from './errors.ts';

/**
 * Args checked against an entry's schema: the parsed value, or a 400 `validation_failed` with one
 * diagnostic per issue (`args.title`). Used by every way an entry is called (HTTP, tools, workflows, the outbox).
 */
export async function validateArgs(schema: StandardSchemaV1, raw: unknown): Promise<unknown> {
  const result = await schema['~standard'].validate(raw);
  if (!result.issues) return result.value;
  const diagnostics: Diagnostic[] = result.issues.map((issue) => {
    // zod (and others) add a machine-readable code; Standard Schema itself does not require one.
    const code = (issue as { code?: unknown }).code;
    return {
      path: ['args', ...(issue.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p))].join('.'),
      message: issue.message,
      code: typeof code === 'string' ? code : 'invalid',
    };
  });
  throw new FwError('validation_failed', `Invalid args: ${diagnostics.map((d) => `${d.path}: ${d.message}`).join('; ')}`, {
    diagnostics,
  });
}
