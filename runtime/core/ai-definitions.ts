import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { AppDatabase, ArgsInput, Auth, EntryDefinition, InferArgs } from './entry-types.ts';

/**
 * What a tool may do, from least to most dangerous. `read` tools run in a read-only transaction and
 * need no approval by default; every other risk needs approval unless the tool says otherwise.
 */
export type ToolRisk = 'read' | 'write' | 'destructive' | 'external';
export const toolRisks: readonly ToolRisk[] = ['read', 'write', 'destructive', 'external'];

/** The context of an `aiTool` handler: the caller's identity, a transaction under it, declared secrets. */
export interface ToolContext {
  /** Kysely in this tool call's transaction, as the caller (tenant isolation applies); read-only for `read` tools. */
  db: Kysely<AppDatabase>;
  auth: Auth;
  traceId: string;
  /** Only the environment variables the tool declares in `secrets` (missing ones are absent). */
  secrets: Readonly<Record<string, string>>;
  /**
   * The runtime's clock, as every entry's `ctx.now()`: tests move it with `advanceTime` (SQL's `now()`
   * is the database's clock; pass `ctx.now()` as a bound parameter instead).
   */
  now(): Date;
}

const aiToolBrand = Symbol.for('fw.aiTool');
const agentBrand = Symbol.for('fw.agent');

export interface AiToolDefinition<I = unknown, O = unknown> {
  readonly [aiToolBrand]: true;
  readonly description: string;
  readonly inputSchema: StandardSchemaV1;
  readonly outputSchema: StandardSchemaV1 | undefined;
  readonly risk: ToolRisk;
  readonly needsApproval: boolean;
  readonly secrets: readonly string[];
  readonly handler: (ctx: ToolContext, input: I) => O | Promise<O>;
  readonly __types?: { input: I; output: O };
}

export interface AiToolConfig<A extends ArgsInput | undefined, O> {
  /** What the tool does, for the model. */
  description: string;
  /** The input, validated before the handler runs (Standard Schema, or an object of zod schemas). */
  inputSchema?: A;
  /** The output, validated after the handler returns; a mismatch is an error, never sent to the model. */
  outputSchema?: StandardSchemaV1<unknown, O>;
  /** Default `write`: a tool that does not say it only reads is treated as one that writes. */
  risk?: ToolRisk;
  /** Default: true unless `risk` is `read`. */
  needsApproval?: boolean;
  /** Environment variables the handler reads through `ctx.secrets`; nothing else reaches it. */
  secrets?: readonly string[];
  handler: (ctx: ToolContext, input: InferArgs<A>) => O | Promise<O>;
}

function toSchema(input: ArgsInput | undefined): StandardSchemaV1 {
  if (input === undefined) return z.object({}).strict();
  if ('~standard' in input) return input as StandardSchemaV1;
  return z.object(input as z.ZodRawShape).strict();
}

const secretName = /^[A-Z_][A-Z0-9_]*$/;

/**
 * A tool agents can call. It runs inside the app under the caller's identity, in a transaction of its
 * own (read-only for `read` tools), with the secrets it declares and nothing else of the environment.
 * Its errors reach the model and the client as a short code, never as the thrown message.
 *
 * @example
 *   export default aiTool({
 *     description: 'Counts the caller’s notes',
 *     risk: 'read',
 *     outputSchema: z.object({ count: z.number() }),
 *     handler: async (ctx) => ({ count: (await ctx.db.selectFrom('notes').select('id').execute()).length }),
 *   });
 */
export function aiTool<A extends ArgsInput | undefined = undefined, O = unknown>(config: AiToolConfig<A, O>): AiToolDefinition<InferArgs<A>, O> {
  if (typeof config?.handler !== 'function') throw new TypeError('fw: aiTool({...}) needs a handler: aiTool({ description, handler: async (ctx, input) => … })');
  if (typeof config.description !== 'string' || config.description.trim() === '') {
    throw new TypeError('fw: aiTool({...}) needs a description: the model reads it to decide when to call the tool.');
  }
  const risk = config.risk ?? 'write';
  if (!toolRisks.includes(risk)) throw new TypeError(`fw: aiTool risk must be one of ${toolRisks.join(', ')}; got "${String(risk)}".`);
  const secrets = config.secrets ?? [];
  for (const name of secrets) {
    if (typeof name !== 'string' || !secretName.test(name)) {
      throw new TypeError(`fw: aiTool secrets are environment variable names like "STRIPE_KEY"; got ${JSON.stringify(name)}.`);
    }
  }
  return Object.freeze({
    [aiToolBrand]: true as const,
    description: config.description,
    inputSchema: toSchema(config.inputSchema),
    outputSchema: config.outputSchema,
    risk,
    needsApproval: config.needsApproval ?? risk !== 'read',
    secrets: Object.freeze([...secrets]),
    handler: config.handler as AiToolDefinition<InferArgs<A>, O>['handler'],
  });
}

export function isAiTool(value: unknown): value is AiToolDefinition {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[aiToolBrand] === true;
}

/** When an agent's tool loop stops. */
export interface StepCountStop {
  kind: 'stepCount';
  maxSteps: number;
}

/** The step limit of an agent that declares none (the red team reports such agents). */
export const DEFAULT_MAX_STEPS = 10;
/** No agent, and no run, may go beyond this many steps. */
export const MAX_STEPS_CEILING = 100;

const externalToolBrand = Symbol.for('fw.externalTool');

/** An external service's entry as an agent tool (see {@link externalTool}). */
export interface ExternalToolRef {
  readonly [externalToolBrand]: true;
  /** `<service>.<entry>`. */
  readonly qualifiedName: string;
}

/**
 * An entry of an external service (a manifest entry) as an agent tool. It is listed under the name
 * `<service>_<entry>` (tool names cannot hold dots) and runs through fw's bridge as the caller; external
 * commands need approval unless their manifest says otherwise.
 *
 * @example
 *   agent({ model: 'openai/gpt-4o-mini', tools: { tickets_createTicket: externalTool('tickets.createTicket') } })
 */
export function externalTool(qualifiedName: string): ExternalToolRef {
  if (typeof qualifiedName !== 'string' || !/^[a-z][A-Za-z0-9_-]*\.[a-z][A-Za-z0-9]*$/.test(qualifiedName)) {
    throw new TypeError(`fw: externalTool("${String(qualifiedName)}") needs "<service>.<entry>", e.g. externalTool('tickets.createTicket').`);
  }
  return Object.freeze({ [externalToolBrand]: true as const, qualifiedName });
}

export function isExternalTool(value: unknown): value is ExternalToolRef {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[externalToolBrand] === true;
}

/** The tool name of an external entry: `tickets.createTicket` → `tickets_createTicket`. */
export function externalToolName(qualifiedName: string): string {
  return qualifiedName.replace('.', '_');
}

/**
 * A tool of an agent: an `aiTool`, a command/query/liveQuery entry (its auto-tool: queries read
 * without approval, commands write with approval unless the entry says otherwise), or an external
 * entry (`externalTool('service.entry')`).
 */
export type AgentTool = AiToolDefinition<any, any> | EntryDefinition | ExternalToolRef;

export interface AgentConfig {
  /** `gateway` (Vercel AI Gateway, `AI_GATEWAY_API_KEY`). Without a key, or with `FW_AI=mock`, fw's scripted mock answers. */
  provider?: 'gateway' | 'mock';
  /** A provider-qualified model id, e.g. `openai/gpt-4o-mini`. */
  model: string;
  instructions?: string;
  /** The tools the model may call, by the name it sees. */
  tools?: Record<string, AgentTool>;
  stopWhen?: StepCountStop;
}

export interface AgentDefinition {
  readonly [agentBrand]: true;
  readonly provider: 'gateway' | 'mock';
  readonly model: string;
  readonly instructions: string | undefined;
  readonly tools: Readonly<Record<string, AgentTool>>;
  /** The agent's own step limit; undefined when it declares none (then `DEFAULT_MAX_STEPS` applies). */
  readonly maxSteps: number | undefined;
}

const toolNamePattern = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

/**
 * An agent: a model, its instructions, its tools and its step limit. Run it with
 * `ctx.agent.run({ agent: 'name', prompt })` from an action, workflow or endpoint, or over HTTP
 * (`POST /ai/agents/run`, `POST /ai/agents/chat`). The name is the file name under `src/ai/agents/`.
 *
 * @example
 *   import listNotes from '../../queries/listNotes.ts';
 *   export default agent({ model: 'openai/gpt-4o-mini', tools: { listNotes }, stopWhen: { kind: 'stepCount', maxSteps: 5 } });
 */
export function agent(config: AgentConfig): AgentDefinition {
  if (typeof config?.model !== 'string' || config.model === '') {
    throw new TypeError("fw: agent({...}) needs a model id, e.g. agent({ model: 'openai/gpt-4o-mini', … }).");
  }
  const provider = config.provider ?? 'gateway';
  if (provider !== 'gateway' && provider !== 'mock') throw new TypeError(`fw: agent provider must be "gateway" or "mock"; got "${String(provider)}".`);
  const tools = config.tools ?? {};
  for (const [name, tool] of Object.entries(tools)) {
    if (!toolNamePattern.test(name)) throw new TypeError(`fw: agent tool name "${name}" must be letters, digits, _ or - (at most 64), starting with a letter.`);
    const callable = isAiTool(tool) || isExternalTool(tool) || ((tool as EntryDefinition)?.kind !== undefined && ['command', 'query', 'liveQuery'].includes((tool as EntryDefinition).kind));
    if (!callable) {
      throw new TypeError(`fw: agent tool "${name}" must be an aiTool(…), a command, query or liveQuery definition (import it from its file), or externalTool('service.entry').`);
    }
  }
  let maxSteps: number | undefined;
  if (config.stopWhen !== undefined) {
    const { kind, maxSteps: steps } = config.stopWhen;
    if (kind !== 'stepCount' || !Number.isInteger(steps) || steps < 1 || steps > MAX_STEPS_CEILING) {
      throw new TypeError(`fw: agent stopWhen must be { kind: 'stepCount', maxSteps: n } with 1 ≤ n ≤ ${MAX_STEPS_CEILING}.`);
    }
    maxSteps = steps;
  }
  return Object.freeze({
    [agentBrand]: true as const,
    provider,
    model: config.model,
    instructions: config.instructions,
    tools: Object.freeze({ ...tools }),
    maxSteps,
  });
}

export function isAgent(value: unknown): value is AgentDefinition {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[agentBrand] === true;
}

/**
 * The steps a run may take: the agent's limit (or the default), lowered — never raised — by the run's.
 *
 * @example
 *   effectiveMaxSteps(5, 20) // 5
 */
export function effectiveMaxSteps(agentMaxSteps: number | undefined, requested: number | undefined): number {
  const limit = agentMaxSteps ?? DEFAULT_MAX_STEPS;
  if (requested === undefined) return limit;
  if (!Number.isInteger(requested) || requested < 1) throw new TypeError(`maxSteps must be a whole number ≥ 1; got ${requested}.`);
  return Math.min(limit, requested);
}
