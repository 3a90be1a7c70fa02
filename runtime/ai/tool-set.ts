import { jsonSchema, tool, type ToolSet } from 'ai';
import type { FwDatabase } from '../db/database.ts';
import type { Auth } from '../core/entry-types.ts';
import { FwError, toFwError } from '../core/errors.ts';
import { authorizePolicy, callEntry } from '../entry/execute.ts';
import { validateArgs } from '../core/validate-args.ts';
import { inSpan } from '../telemetry/tracing.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { callExternalEntry } from '../external/services.ts';
import { type CatalogTool, toolInputJsonSchema } from './catalog.ts';

/** One tool call as telemetry keeps it: no input, no output. */
export interface ToolCallRecord {
  toolCallId: string;
  tool: string;
  durationMs: number;
  outcome: 'ok' | 'error';
  /** The fw error code when it failed. */
  errorCode?: string;
}

export interface ToolSetOptions {
  app: AppDefinition;
  db: FwDatabase;
  auth: Auth;
  traceId: string;
  /** Where each call's record goes, with its outcome (the output, or the error as the model saw it). */
  onToolCall?: (record: ToolCallRecord, outcome: { output: unknown } | { error: FwError }) => void;
  /** The environment secrets are taken from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Calls an external entry (default: fw's bridge); the red team records calls instead of making them. */
  callExternal?: typeof callExternalEntry;
}

/**
 * What the model and the client learn of a failed tool call. The caller's own mistakes (bad input,
 * missing rights, a conflict) are told as fw's message; anything else is reduced to its code and the
 * trace id, so SQL, paths, secrets or stack traces in a thrown error never reach a model or a chat.
 */
export function redactToolError(error: unknown, traceId: string): FwError {
  const fw = toFwError(error);
  if (fw.status < 500) return fw;
  return new FwError(fw.code, `The tool failed (${fw.code}); trace id ${traceId}.`, { cause: error });
}

/** Which of `tools` this caller may use: those whose policy lets them in. A tool is never offered to a caller who could not call it. */
export async function permittedTools(app: AppDefinition, tools: readonly CatalogTool[], auth: Auth): Promise<CatalogTool[]> {
  const allowed = await Promise.all(
    tools.map((t) =>
      authorizePolicy(app, t.policy, auth, true, t.name).then(
        () => true,
        () => false,
      ),
    ),
  );
  return tools.filter((_, i) => allowed[i]);
}

/**
 * The AI SDK tools for one run: each call goes through fw's runtime under the caller's identity —
 * entries through `callEntry` (policy, args, transaction, tenant isolation), aiTools in a transaction
 * of their own (read-only for `read` tools) with only their declared secrets, and their output checked
 * against `outputSchema`. Approval is decided by the run (`toolApproval`), not here.
 */
export function buildToolSet(tools: readonly CatalogTool[], options: ToolSetOptions): ToolSet {
  const set: ToolSet = {};
  for (const t of tools) {
    set[t.name] = tool({
      description: t.description,
      // fw validates the input itself (with the entry's own schema); the JSON Schema is what the model sees.
      inputSchema: jsonSchema((toolInputJsonSchema(t) ?? { type: 'object' }) as never),
      execute: async (input: unknown, { toolCallId }) => {
        const started = performance.now();
        try {
          // Name, kind and approval state only: never the input or the output.
          const output =
            (await inSpan(`fw.ai.tool ${t.name}`, { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': t.name, 'fw.ai.tool.kind': t.kind, 'fw.ai.approval': t.needsApproval ? 'approved' : 'not_required' } }, () =>
              runTool(t, input, options),
            )) ?? null;
          options.onToolCall?.({ toolCallId, tool: t.name, durationMs: elapsed(started), outcome: 'ok' }, { output });
          return output;
        } catch (error) {
          const redacted = redactToolError(error, options.traceId);
          options.onToolCall?.({ toolCallId, tool: t.name, durationMs: elapsed(started), outcome: 'error', errorCode: redacted.code }, { error: redacted });
          throw redacted;
        }
      },
    });
  }
  return set;
}

async function runTool(t: CatalogTool, input: unknown, options: ToolSetOptions): Promise<unknown> {
  const { app, db, auth, traceId } = options;
  if (t.source === 'entry') return callEntry(app, db, t.entry, { auth, traceId, args: input, external: true, name: t.name });
  if (t.source === 'external') return (options.callExternal ?? callExternalEntry)(app, db, t.service, t.external, { auth, traceId, args: input ?? {} });
  if (auth.kind === 'anonymous') throw new FwError('unauthenticated', 'Sign in to use AI tools.');
  const args = await validateArgs(t.tool.inputSchema, input);
  const env = options.env ?? process.env;
  const secrets: Record<string, string> = {};
  for (const name of t.tool.secrets) {
    const value = env[name];
    if (value !== undefined) secrets[name] = value;
  }
  const output = await db.transaction({ readOnly: t.readOnly, auth, traceId, label: `aiTool ${t.name}` }, (trx) =>
    Promise.resolve(t.tool.handler({ db: trx, auth, traceId, secrets: Object.freeze(secrets) }, args)),
  );
  if (!t.tool.outputSchema) return output;
  const checked = await t.tool.outputSchema['~standard'].validate(output);
  if (checked.issues) {
    const where = checked.issues.map((i) => `${(i.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new FwError('internal', `aiTool ${t.name} returned output that does not match its outputSchema (${where}).`);
  }
  return checked.value;
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}
