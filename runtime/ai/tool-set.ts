import { jsonSchema, tool, type ToolSet } from 'ai';
import type { AppDefinition, ExternalService } from '../core/app-definition.ts';
import type { Auth } from '../core/entry-types.ts';
import { FwError, toFwError } from '../core/errors.ts';
import type { ManifestEntry } from '../core/external-manifest.ts';
import { type EntryServices, invokeEntry } from '../entry/pipeline.ts';
import { allowedBy } from '../entry/policy.ts';
import { inSpan } from '../telemetry/tracing.ts';
import { type FwConfig, resolveConfig } from '../config/resolve-config.ts';
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

/** Calls an external service's entry for a tool (external/services.ts `callExternalEntry`, given by whoever assembled the runtime). */
export type CallExternalEntry = (
  app: AppDefinition,
  db: EntryServices['db'] | undefined,
  service: ExternalService,
  entry: ManifestEntry,
  call: { auth: Auth; traceId: string; args: unknown },
) => Promise<unknown>;

export interface ToolSetOptions {
  /** How entries and aiTools run: the entry pipeline's services, under the caller's identity. */
  services: EntryServices;
  auth: Auth;
  traceId: string;
  /** Where each call's record goes, with its outcome (the output, or the error as the model saw it). */
  onToolCall?: (record: ToolCallRecord, outcome: { output: unknown } | { error: FwError }) => void;
  /** Where aiTools' declared secrets are read (default: the process environment). */
  config?: FwConfig;
  /** Calls an external entry (fw's bridge); the red team records calls instead of making them. */
  callExternal?: CallExternalEntry;
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
  const allowed = await Promise.all(tools.map((t) => allowedBy(app, t.policy, auth, true)));
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

/** Runs one tool call through the entry pipeline, as the caller and from outside (`system` entries refuse). */
function runTool(t: CatalogTool, input: unknown, options: ToolSetOptions): Promise<unknown> {
  const { services, auth, traceId } = options;
  const call = { name: t.name, auth, traceId, external: true, args: input, what: t.source === 'aiTool' ? `aiTool ${t.name}` : 'this entry' };
  if (t.source === 'entry') return invokeEntry(services, t.entry, call);
  if (t.source === 'external') {
    if (!options.callExternal) throw new FwError('internal', `The tool ${t.name} calls an external service, and this runtime was assembled without the bridge.`);
    return options.callExternal(services.app, services.db, t.service, t.external, { auth, traceId, args: input ?? {} });
  }
  const tool = { kind: 'aiTool' as const, policy: 'user', args: t.tool.inputSchema, handler: t.tool.handler, readOnly: t.readOnly, ...(t.tool.outputSchema ? { outputSchema: t.tool.outputSchema } : {}) };
  return invokeEntry(services, tool, { ...call, context: { secrets: Object.freeze(secretsOf(t.tool.secrets, options.config ?? resolveConfig())) } });
}

/** The declared secrets that are set, and nothing else of the environment. */
function secretsOf(names: readonly string[], config: FwConfig): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const name of names) {
    const value = config.appVariable(name);
    if (value !== undefined) secrets[name] = value;
  }
  return secrets;
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}
