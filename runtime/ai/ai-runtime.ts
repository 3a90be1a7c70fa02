import type { ServerResponse } from 'node:http';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import {
  convertToModelMessages,
  generateText,
  InvalidToolApprovalSignatureError,
  isStepCount,
  jsonSchema,
  type ModelMessage,
  Output,
  type StepResult,
  streamText,
  type ToolSet,
  type UIMessage,
  validateUIMessages,
} from 'ai';
import { z } from 'zod';
import { argsJsonSchema } from '../core/args-schema.ts';
import type { FwDatabase } from '../db/database.ts';
import type { Environment } from '../config/environment.ts';
import { configOf } from '../config/resolve-config.ts';
import { databaseSecret } from '../db/secrets.ts';
import type { Auth } from '../core/entry-types.ts';
import { FwError, isFwError } from '../core/errors.ts';
import type { AgentRunRequest, AgentRunResult, AiContext, ApprovalDecision, GenerateRequest, ToolCallView, ToolResultView, Usage } from '../core/ai-context.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { type ApprovalBinding, decideApprovals, issueApprovals } from './approval-ledger.ts';
import { agentTools } from './catalog.ts';
import { sealMessages, sealOfCall, sealOfResult, verifyMessages, verifyUiMessages } from './history-seal.ts';
import { type AgentDefinition, effectiveMaxSteps } from '../core/ai-definitions.ts';
import { defaultModelResolver, type ModelResolver, type ResolvedModel } from './models.ts';
import { tracedModel } from './traced-model.ts';
import { buildToolSet, permittedTools, type ToolCallRecord, type ToolSetOptions } from './tool-set.ts';
import type { EntryServices } from '../entry/pipeline.ts';
import { type AiTrace, type RecordedToolCall, recordTrace, type TraceApproval, type TraceStep } from './traces.ts';

export type { AgentRunRequest, AgentRunResult, AiContext, ApprovalDecision, GenerateRequest } from '../core/ai-context.ts';

export interface AiRuntimeOptions {
  app: AppDefinition;
  db: FwDatabase;
  /** Picks each run's model (default: the AI Gateway with `AI_GATEWAY_API_KEY`, else the scripted mock). */
  resolveModel?: ModelResolver;
  /**
   * Signs approval requests so a client cannot fabricate an approval (default `FW_AI_APPROVAL_SECRET`,
   * else a random secret kept in the database, shared by every process of it). Who may decide an
   * approval, once, before it expires, is kept in the approval ledger (approval-ledger.ts).
   */
  approvalSecret?: string;
  /** Keep prompts, final texts and tool calls' inputs and outputs in traces (default: `FW_AI_RECORD_CONTENT=1`; off). */
  recordContent?: boolean;
  /** The environment fw's AI variables and aiTools' declared secrets come from (default: the process's). */
  env?: Environment;
  /**
   * Accepts approval histories without a signature, as an app that trusts its clients would. It exists
   * only so the red team can show its forged-approval probe catches that; never set it in an app.
   */
  unsafeUnsignedApprovals?: boolean;
  /** Calls external entries for tools (fw's bridge; without it, external tools fail). */
  callExternal?: ToolSetOptions['callExternal'];
  /**
   * How tools run the app's entries and aiTools (the entry pipeline's services). Default: `app` and
   * `db` alone — a command run as a tool then cannot start workflows; `fw`'s own runtimes pass theirs.
   */
  services?: EntryServices;
  /** How long an approval may wait for its decision (default `FW_AI_APPROVAL_TTL_MS`, else 15 minutes). */
  approvalTtlMs?: number;
  /** The clock approvals are issued and expire by (tests move it; default the system clock). */
  now?: () => Date;
}

/** Who runs the agent: tools run with exactly these rights. */
export interface AiCaller {
  auth: Auth;
  traceId: string;
}

export interface AiRuntime {
  /** `POST /ai/agents/run`: runs to the end or to the first approval and answers in JSON. */
  run(body: unknown, caller: AiCaller): Promise<AgentRunResult>;
  /** `POST /ai/agents/chat`: the AI SDK UI message stream for `useChat`. */
  chat(body: unknown, caller: AiCaller, res: ServerResponse, headers: Record<string, string>): Promise<void>;
  context(caller: AiCaller): AiContext;
}

const approvalSchema = z.object({ approvalId: z.string().min(1).max(200), approved: z.boolean(), reason: z.string().max(1000).optional() }).strict();
const runBodySchema = z
  .object({
    agent: z.string().min(1).max(200).optional(),
    prompt: z.string().min(1).max(100_000).optional(),
    messages: z.array(z.record(z.string(), z.unknown())).max(500).optional(),
    approvals: z.array(approvalSchema).max(100).optional(),
    maxSteps: z.number().int().min(1).optional(),
  })
  .strict();
const chatBodySchema = z
  .object({ agent: z.string().min(1).max(200).optional(), messages: z.array(z.unknown()).min(1).max(500), maxSteps: z.number().int().min(1).optional() })
  .passthrough();

/**
 * Agents as fw runs them: the agent's model (or the scripted mock), its tools filtered to what the
 * caller may call and executed under the caller's identity, approval for every tool that needs it
 * (signed, so a history cannot be forged), a step limit that a run may only lower, and a trace per
 * run with counts and timings but no prompts or outputs unless the app opts in.
 */
export function createAiRuntime(options: AiRuntimeOptions): AiRuntime {
  const { app, db } = options;
  const services: EntryServices = options.services ?? { app, db };
  const config = configOf(options.env);
  const resolveModel = options.resolveModel ?? defaultModelResolver(config);
  // An empty FW_AI_APPROVAL_SECRET counts as unset (an empty HMAC key cannot sign anything).
  const configuredSecret = options.approvalSecret || config.get('FW_AI_APPROVAL_SECRET');
  let storedSecret: Promise<string> | undefined;
  const approvalSecret = async (): Promise<string> =>
    configuredSecret || (await (storedSecret ??= databaseSecret(db.admin, 'ai.approval').then((key) => key.toString('base64'))));
  const recordContent = options.recordContent ?? config.get('FW_AI_RECORD_CONTENT');
  const approvalTtlMs = options.approvalTtlMs ?? config.get('FW_AI_APPROVAL_TTL_MS');
  const now = options.now ?? (() => new Date());
  // The red team's unsafe fixture trusts client histories entirely (see unsafeUnsignedApprovals).
  const ledger = !options.unsafeUnsignedApprovals;
  let storedHistoryKey: Promise<Buffer> | undefined;
  const historyKey = (): Promise<Buffer> => (storedHistoryKey ??= databaseSecret(db.admin, 'ai.history'));
  const bindingOf = (agentName: string | null, caller: AiCaller): ApprovalBinding => ({ userId: caller.auth.userId, tenantId: caller.auth.tenantId, agent: agentName ?? '(inline)' });
  const agents = app.agents ?? new Map<string, AgentDefinition>();

  function pickAgent(name: string | undefined): { name: string; definition: AgentDefinition } {
    if (name !== undefined) {
      const definition = agents.get(name);
      if (!definition) {
        throw new FwError('not_found', `No agent named "${name}".`, {
          diagnostics: [{ path: 'body.agent', code: 'unknown_agent', message: `Known: ${[...agents.keys()].sort().join(', ') || '(none)'}`, hint: 'fw ai agents --json lists them.' }],
        });
      }
      return { name, definition };
    }
    if (agents.size === 1) {
      const [only] = agents;
      return { name: only![0], definition: only![1] };
    }
    throw new FwError(agents.size === 0 ? 'not_found' : 'validation_failed', agents.size === 0 ? 'This app has no agents.' : 'Name the agent to run.', {
      diagnostics: [
        agents.size === 0
          ? { path: 'body.agent', code: 'no_agents', message: 'Define one in src/ai/agents/<name>.ts.', hint: 'fw make ai-chat <agent_name>' }
          : { path: 'body.agent', code: 'agent_required', message: `The app has ${agents.size} agents: ${[...agents.keys()].sort().join(', ')}.` },
      ],
    });
  }

  /** The model, tools and settings of one run of `definition` for `caller`. */
  async function prepare(agentName: string | null, definition: AgentDefinition, caller: AiCaller, requestedSteps: number | undefined) {
    if (caller.auth.kind === 'anonymous') throw new FwError('unauthenticated', 'Sign in to run agents (in dev, send x-fw-user-id and x-fw-tenant-id).');
    let maxSteps: number;
    try {
      maxSteps = effectiveMaxSteps(definition.maxSteps, requestedSteps);
    } catch (error) {
      throw new FwError('validation_failed', (error as Error).message, { diagnostics: [{ path: 'body.maxSteps', code: 'invalid', message: (error as Error).message }] });
    }
    const catalog = await permittedTools(app, agentTools(app, definition), caller.auth);
    const resolved = tracedModel(resolveModel({ provider: definition.provider, model: definition.model, ...(agentName ? { agent: agentName } : {}) }));
    const calls: Array<{ record: ToolCallRecord; outcome: { output: unknown } | { error: FwError } }> = [];
    const tools = buildToolSet(catalog, {
      services,
      auth: caller.auth,
      traceId: caller.traceId,
      config,
      onToolCall: (record, outcome) => calls.push({ record, outcome }),
      ...(options.callExternal ? { callExternal: options.callExternal } : {}),
    });
    const approvalNeeded = new Set(catalog.filter((t) => t.needsApproval).map((t) => t.name));
    return {
      resolved,
      calls,
      settings: {
        model: resolved.model,
        tools,
        ...(definition.instructions ? { instructions: definition.instructions } : {}),
        stopWhen: isStepCount(maxSteps),
        toolApproval: ({ toolCall }: { toolCall: { toolName: string } }) => (approvalNeeded.has(toolCall.toolName) ? ('user-approval' as const) : ('not-applicable' as const)),
        ...(options.unsafeUnsignedApprovals ? {} : { experimental_toolApprovalSecret: await approvalSecret() }),
      },
    };
  }

  async function runAgent(agentName: string | null, definition: AgentDefinition, request: Omit<AgentRunRequest, 'agent'>, caller: AiCaller, kind: AiTrace['kind']): Promise<AgentRunResult> {
    const messages = buildMessages(request);
    const prepared = await prepare(agentName, definition, caller, request.maxSteps);
    const binding = bindingOf(agentName, caller);
    // Decisions come as `approvals`, or as approval responses a client put at the end of its history
    // (which the SDK would act on too): every one of them goes through the ledger.
    const decisions = [...newApprovalResponses(request.messages ?? []), ...(request.approvals ?? [])];
    const approvals = describeApprovals(messages, decisions);
    if (ledger) {
      await decideApprovals(db, binding, decisions, messages, { now: now(), traceId: caller.traceId });
      verifyMessages(await historyKey(), binding, messages);
    }
    const started = performance.now();
    let result: Awaited<ReturnType<typeof generateText<ToolSet>>>;
    try {
      result = await generateText({ ...prepared.settings, messages });
    } catch (error) {
      const fw = aiError(error, caller.traceId);
      await recordTrace(db, baseTrace(kind, agentName, prepared.resolved, caller, { status: 'failed', errorCode: fw.code, steps: [], approvals, latencyMs: elapsedSince(started), content: recordContent ? { prompt: request.prompt ?? null, text: null } : null }));
      throw fw;
    }
    const pendingApprovals = result.content.flatMap((part) =>
      part.type === 'tool-approval-request' && !part.isAutomatic
        ? [{ approvalId: part.approvalId, toolCallId: part.toolCall.toolCallId, toolName: part.toolCall.toolName, input: part.toolCall.input }]
        : [],
    );
    if (ledger) await issueApprovals(db, binding, pendingApprovals, { now: now(), ttlMs: approvalTtlMs, traceId: caller.traceId });
    const responseMessages = ledger ? sealMessages(await historyKey(), binding, result.responseMessages) : result.responseMessages;
    const steps = result.steps.map((step) => traceStep(step, prepared.calls.map((c) => c.record), pendingApprovals));
    const usage = sumUsage(steps);
    await recordTrace(db, {
      ...baseTrace(kind, agentName, prepared.resolved, caller, {
        status: pendingApprovals.length > 0 ? 'awaiting-approval' : 'completed',
        errorCode: null,
        steps,
        approvals,
        latencyMs: elapsedSince(started),
        content: recordContent ? { prompt: request.prompt ?? null, text: result.text, toolCalls: recordedToolCalls(result.steps, prepared.calls, messages) } : null,
      }),
      costUsd: costOf(result.steps, prepared.resolved),
    });
    const toolCalls = result.steps.flatMap((step) => step.toolCalls.map((c) => ({ toolCallId: c.toolCallId, toolName: c.toolName, input: c.input })));
    return {
      agent: agentName ?? '(inline)',
      status: pendingApprovals.length > 0 ? 'awaiting-approval' : 'completed',
      text: result.text,
      steps: result.steps.map((step, i) => ({
        step: i,
        finishReason: String(step.finishReason),
        toolCalls: step.toolCalls.map((c) => ({ toolCallId: c.toolCallId, toolName: c.toolName, input: c.input })),
        usage: { inputTokens: steps[i]!.inputTokens, outputTokens: steps[i]!.outputTokens, totalTokens: steps[i]!.inputTokens + steps[i]!.outputTokens },
      })),
      toolCalls,
      toolResults: [
        ...prepared.calls.map(({ record, outcome }) =>
          'output' in outcome
            ? { toolCallId: record.toolCallId, toolName: record.tool, output: outcome.output }
            : { toolCallId: record.toolCallId, toolName: record.tool, error: { code: outcome.error.code, message: outcome.error.message } },
        ),
        ...approvals.filter((a) => !a.approved).map((a) => ({ toolCallId: toolCallIdOf(messages, a.approvalId) ?? a.approvalId, toolName: a.tool ?? '(unknown)', denied: true as const })),
      ],
      pendingApprovals,
      messages: [...messages, ...responseMessages],
      usage,
      traceId: caller.traceId,
    };
  }

  async function generate(request: GenerateRequest, caller: AiCaller, schema: StandardSchemaV1 | undefined) {
    if (typeof request?.prompt !== 'string' || request.prompt === '') throw new TypeError('fw: ctx.ai.generateText({ prompt }) needs a prompt.');
    const resolved = tracedModel(resolveModel({ provider: request.provider ?? 'gateway', model: request.model ?? config.get('FW_AI_MODEL') }));
    const kind = schema ? 'generate-structured' : 'generate-text';
    const started = performance.now();
    const jsonSchemaOf = schema ? argsJsonSchema(schema) : undefined;
    if (jsonSchemaOf?.kind === 'unavailable') throw new TypeError(`fw: ctx.ai.generateStructured: ${jsonSchemaOf.reason}`);
    try {
      const result = await generateText({
        model: resolved.model,
        prompt: request.prompt,
        ...(request.instructions ? { instructions: request.instructions } : {}),
        ...(jsonSchemaOf?.kind === 'json-schema' ? { output: Output.object({ schema: jsonSchema(jsonSchemaOf.schema as never) }) } : {}),
      });
      let object: unknown;
      if (schema) {
        const checked = await schema['~standard'].validate(result.output);
        if (checked.issues) throw new FwError('internal', `The model's answer does not match the schema: ${checked.issues.map((i) => i.message).join('; ')}`);
        object = checked.value;
      }
      const steps = result.steps.map((step) => traceStep(step, [], []));
      await recordTrace(db, {
        ...baseTrace(kind, null, resolved, caller, { status: 'completed', errorCode: null, steps, approvals: [], latencyMs: elapsedSince(started), content: recordContent ? { prompt: request.prompt, text: result.text } : null }),
        costUsd: costOf(result.steps, resolved),
      });
      return { text: result.text, object, usage: sumUsage(steps), traceId: caller.traceId };
    } catch (error) {
      const fw = aiError(error, caller.traceId);
      await recordTrace(db, baseTrace(kind, null, resolved, caller, { status: 'failed', errorCode: fw.code, steps: [], approvals: [], latencyMs: elapsedSince(started), content: null }));
      throw fw;
    }
  }

  return {
    async run(body, caller) {
      const request = parseBody(runBodySchema, body);
      const { name, definition } = pickAgent(request.agent);
      return runAgent(name, definition, request as Omit<AgentRunRequest, 'agent'>, caller, 'agent-run');
    },

    async chat(body, caller, res, headers) {
      const request = parseBody(chatBodySchema, body);
      const { name, definition } = pickAgent(request.agent);
      const prepared = await prepare(name, definition, caller, request.maxSteps);
      let uiMessages: UIMessage[];
      try {
        uiMessages = await validateUIMessages({ messages: request.messages });
      } catch (error) {
        throw new FwError('validation_failed', `Invalid chat messages: ${(error as Error).message.slice(0, 300)}`, { diagnostics: [{ path: 'body.messages', code: 'invalid_messages', message: 'Send the messages of useChat as they are.' }] });
      }
      if (uiMessages.some((m) => m.role === 'system')) throw systemMessageRefused();
      const messages = await convertToModelMessages(uiMessages, { tools: prepared.settings.tools });
      const binding = bindingOf(name, caller);
      const decisions = newApprovalResponses(messages);
      const approvals = describeApprovals(messages, decisions);
      const key = ledger ? await historyKey() : undefined;
      if (key) {
        await decideApprovals(db, binding, decisions, messages, { now: now(), traceId: caller.traceId });
        verifyUiMessages(key, binding, uiMessages);
      }
      const started = performance.now();
      let failure: FwError | undefined;
      const result = streamText({
        ...prepared.settings,
        messages,
        // Recorded before the stream goes on (the SDK awaits onChunk before it transforms the next
        // chunk), so the request is in the ledger before the client can see the stream finish.
        onChunk: async ({ chunk }) => {
          if (ledger && chunk.type === 'tool-approval-request' && !chunk.isAutomatic) {
            const call = chunk.toolCall;
            await issueApprovals(db, binding, [{ approvalId: chunk.approvalId, toolCallId: call.toolCallId, toolName: call.toolName, input: call.input }], {
              now: now(),
              ttlMs: approvalTtlMs,
              traceId: caller.traceId,
            });
          }
        },
        onError: ({ error }) => {
          failure = aiError(error, caller.traceId);
        },
        onEnd: async (event) => {
          const pending = event.content.flatMap((p) => (p.type === 'tool-approval-request' && !p.isAutomatic ? [{ toolCallId: p.toolCall.toolCallId }] : []));
          const steps = event.steps.map((step) => traceStep(step, prepared.calls.map((c) => c.record), pending));
          await recordTrace(db, {
            ...baseTrace('agent-chat', name, prepared.resolved, caller, {
              status: pending.length > 0 ? 'awaiting-approval' : 'completed',
              errorCode: null,
              steps,
              approvals,
              latencyMs: elapsedSince(started),
              content: recordContent ? { prompt: lastUserText(uiMessages), text: event.text, toolCalls: recordedToolCalls(event.steps, prepared.calls, messages) } : null,
            }),
            costUsd: costOf(event.steps, prepared.resolved),
          });
        },
      });
      await result.pipeUIMessageStreamToResponse(res, {
        headers,
        originalMessages: uiMessages,
        // Seals of this response's tool calls and results, merged into the assistant message's
        // metadata by the client (useChat), which sends them back with the history.
        ...(key ? { messageMetadata: ({ part }: { part: { type: string } }) => chatSeal(key, binding, part) } : {}),
        onError: (error) => {
          const fw = failure ?? aiError(error, caller.traceId);
          if (!failure) failure = fw;
          void recordTrace(db, baseTrace('agent-chat', name, prepared.resolved, caller, { status: 'failed', errorCode: fw.code, steps: [], approvals, latencyMs: elapsedSince(started), content: null }));
          return `${fw.code}: ${fw.message}`;
        },
      });
    },

    context(caller) {
      return {
        agent: {
          run: ({ agent: name, prompt, maxSteps }) => {
            const { definition } = pickAgent(name);
            return runAgent(name, definition, { prompt, ...(maxSteps === undefined ? {} : { maxSteps }) }, caller, 'agent-run');
          },
        },
        ai: {
          runAgent: ({ agent: target, ...request }) => {
            if (typeof target === 'string') return runAgent(target, pickAgent(target).definition, request, caller, 'agent-run');
            return runAgent(null, target, request, caller, 'agent-run');
          },
          generateText: async (request) => {
            const { text, usage, traceId } = await generate(request, caller, undefined);
            return { text, usage, traceId };
          },
          generateStructured: async (request) => {
            const { object, usage, traceId } = await generate(request, caller, request.schema);
            return { object: object as never, usage, traceId };
          },
        },
      };
    },
  };
}

/** `metadata.fw.seals` for a tool call or result part of a chat stream (history-seal.ts). */
function chatSeal(key: Buffer, binding: ApprovalBinding, part: { type: string }): unknown {
  const p = part as { type: string; toolCallId?: string; toolName?: string; input?: unknown; output?: unknown; providerExecuted?: boolean; preliminary?: boolean };
  if (p.providerExecuted || p.preliminary || typeof p.toolCallId !== 'string' || typeof p.toolName !== 'string') return undefined;
  if (p.type === 'tool-call') return { fw: { seals: { [p.toolCallId]: sealOfCall(key, binding, p.toolCallId, p.toolName, p.input) } } };
  if (p.type === 'tool-result') return { fw: { seals: { [p.toolCallId]: { result: sealOfResult(key, binding, p.toolCallId, p.toolName, { output: p.output ?? null }) } } } };
  return undefined;
}

function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  const diagnostics = parsed.error.issues.map((issue) => ({ path: ['body', ...issue.path.map(String)].join('.'), message: issue.message, code: issue.code }));
  throw new FwError('validation_failed', `Invalid request: ${diagnostics.map((d) => `${d.path}: ${d.message}`).join('; ')}`, { diagnostics });
}

function systemMessageRefused(): FwError {
  return new FwError('validation_failed', 'Messages may not carry system instructions; the agent’s instructions come from its definition.', {
    diagnostics: [{ path: 'body.messages', code: 'system_message', message: 'Remove messages with role "system".' }],
  });
}

/** The history of a run: earlier messages (no system role), the new prompt, and the approval decisions. */
function buildMessages(request: Omit<AgentRunRequest, 'agent'>): ModelMessage[] {
  const messages = [...(request.messages ?? [])] as ModelMessage[];
  if (messages.some((m) => (m as { role?: unknown }).role === 'system')) throw systemMessageRefused();
  if (request.approvals && request.approvals.length > 0) {
    const requested = new Set(approvalRequests(messages).map((r) => r.approvalId));
    const unknown = request.approvals.filter((a) => !requested.has(a.approvalId));
    if (unknown.length > 0) {
      throw new FwError('validation_failed', 'An approval answers no pending approval request of the messages.', {
        diagnostics: unknown.map((a) => ({ path: 'body.approvals', code: 'unknown_approval', message: `No approval request "${a.approvalId}" in messages.`, hint: 'Send back the messages of the run that asked for approval.' })),
      });
    }
    messages.push({
      role: 'tool',
      content: request.approvals.map((a) => ({ type: 'tool-approval-response' as const, approvalId: a.approvalId, approved: a.approved, ...(a.reason ? { reason: a.reason } : {}) })),
    });
  }
  if (request.prompt !== undefined) messages.push({ role: 'user', content: request.prompt });
  if (messages.length === 0) {
    throw new FwError('validation_failed', 'Send a prompt (or the messages of a run to continue).', {
      diagnostics: [{ path: 'body.prompt', code: 'required', message: 'e.g. { "prompt": "List my notes" }' }],
    });
  }
  return messages;
}

function approvalRequests(messages: readonly ModelMessage[]): Array<{ approvalId: string; toolCallId: string }> {
  const found: Array<{ approvalId: string; toolCallId: string }> = [];
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type === 'tool-approval-request') found.push({ approvalId: part.approvalId, toolCallId: part.toolCallId });
    }
  }
  return found;
}

function toolCallIdOf(messages: readonly ModelMessage[], approvalId: string): string | undefined {
  return approvalRequests(messages).find((r) => r.approvalId === approvalId)?.toolCallId;
}

/**
 * The approval decisions this request makes. A chat client sends the whole history every turn, and
 * earlier decisions stay in it. As the AI SDK does (collectToolApprovals), only the trailing tool
 * message's decisions count, and of those not one whose call already has its result there (a denial
 * sent with its `execution-denied` result is still this request's).
 */
function newApprovalResponses(messages: readonly ModelMessage[]): ApprovalDecision[] {
  const last = messages.at(-1);
  if (last?.role !== 'tool') return [];
  const results = new Map(last.content.flatMap((part) => (part.type === 'tool-result' ? [[part.toolCallId, part.output.type] as const] : [])));
  return last.content.flatMap((part) => {
    if (part.type !== 'tool-approval-response') return [];
    const result = results.get(toolCallIdOf(messages, part.approvalId) ?? '');
    const actedOn = result !== undefined && (part.approved || result !== 'execution-denied');
    return actedOn ? [] : [{ approvalId: part.approvalId, approved: part.approved }];
  });
}

/** The decisions with the tool each concerns (looked up in the history), for the trace. */
function describeApprovals(messages: readonly ModelMessage[], decisions: readonly ApprovalDecision[]): TraceApproval[] {
  const toolOf = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    const names = new Map(message.content.flatMap((p) => (p.type === 'tool-call' ? [[p.toolCallId, p.toolName] as const] : [])));
    for (const part of message.content) {
      if (part.type === 'tool-approval-request') toolOf.set(part.approvalId, names.get(part.toolCallId) ?? '(unknown)');
    }
  }
  return decisions.map((d) => ({ approvalId: d.approvalId, tool: toolOf.get(d.approvalId) ?? null, approved: d.approved }));
}

function traceStep(step: StepResult<ToolSet>, records: readonly ToolCallRecord[], pending: ReadonlyArray<{ toolCallId: string }>): TraceStep {
  const pendingIds = new Set(pending.map((p) => p.toolCallId));
  return {
    step: step.stepNumber,
    provider: step.model.provider,
    model: step.model.modelId,
    finishReason: String(step.finishReason),
    inputTokens: step.usage.inputTokens ?? 0,
    outputTokens: step.usage.outputTokens ?? 0,
    latencyMs: Math.round(step.performance.stepTimeMs * 10) / 10,
    toolCalls: step.toolCalls.map((call) => {
      const record = records.find((r) => r.toolCallId === call.toolCallId);
      if (record) return record;
      return { toolCallId: call.toolCallId, tool: call.toolName, outcome: pendingIds.has(call.toolCallId) ? ('awaiting-approval' as const) : ('denied' as const) };
    }),
  };
}

/**
 * The run's tool calls with their input and output, for a trace that keeps content: those the model
 * made in this run's steps, and those an approval sent with the request let run first (their input is
 * in the history).
 */
function recordedToolCalls(
  steps: ReadonlyArray<StepResult<ToolSet>>,
  calls: ReadonlyArray<{ record: ToolCallRecord; outcome: { output: unknown } | { error: FwError } }>,
  history: readonly ModelMessage[],
): RecordedToolCall[] {
  const made = steps.flatMap((step) => step.toolCalls.map((c) => ({ toolCallId: c.toolCallId, tool: c.toolName, input: c.input })));
  const earlier = new Map<string, unknown>();
  for (const message of history) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) if (part.type === 'tool-call') earlier.set(part.toolCallId, part.input);
  }
  const resumed = calls.filter((c) => !made.some((m) => m.toolCallId === c.record.toolCallId)).map((c) => ({ toolCallId: c.record.toolCallId, tool: c.record.tool, input: earlier.get(c.record.toolCallId) }));
  return [...resumed, ...made].map((call) => {
    const outcome = calls.find((c) => c.record.toolCallId === call.toolCallId)?.outcome;
    const ran = outcome === undefined ? {} : 'output' in outcome ? { output: outcome.output ?? null } : { error: { code: outcome.error.code, message: outcome.error.message } };
    return { toolCallId: call.toolCallId, tool: call.tool, input: call.input ?? null, ...ran };
  });
}

function baseTrace(
  kind: AiTrace['kind'],
  agent: string | null,
  resolved: ResolvedModel,
  caller: AiCaller,
  rest: Pick<AiTrace, 'status' | 'errorCode' | 'steps' | 'approvals' | 'latencyMs' | 'content'>,
): AiTrace {
  const totals = sumUsage(rest.steps);
  return {
    traceId: caller.traceId,
    kind,
    agent,
    provider: resolved.provider,
    model: resolved.modelId,
    auth: { userId: caller.auth.userId, tenantId: caller.auth.tenantId },
    inputTokens: totals.inputTokens,
    outputTokens: totals.outputTokens,
    costUsd: resolved.provider === 'mock' ? 0 : null,
    ...rest,
  };
}

function sumUsage(steps: ReadonlyArray<{ inputTokens: number; outputTokens: number }>): Usage {
  const inputTokens = steps.reduce((n, s) => n + s.inputTokens, 0);
  const outputTokens = steps.reduce((n, s) => n + s.outputTokens, 0);
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
}

/** The AI Gateway reports each call's cost in its provider metadata; other providers leave it unknown. */
function costOf(steps: ReadonlyArray<StepResult<ToolSet>>, resolved: ResolvedModel): number | null {
  if (resolved.provider === 'mock') return 0;
  let total = 0;
  for (const step of steps) {
    const cost = Number((step.providerMetadata?.gateway as { cost?: unknown } | undefined)?.cost);
    if (!Number.isFinite(cost)) return null;
    total += cost;
  }
  return total;
}

function lastUserText(messages: readonly UIMessage[]): string | null {
  const last = messages.findLast((m) => m.role === 'user');
  return last ? last.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n') : null;
}

function elapsedSince(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}

/** Errors of a run as fw errors: a forged approval is `forbidden`; provider failures become `unavailable` without their text. */
function aiError(error: unknown, traceId: string): FwError {
  if (isFwError(error)) return error;
  if (InvalidToolApprovalSignatureError.isInstance(error)) {
    return new FwError('forbidden', 'An approval in the history was not issued by this server (its signature does not match); no tool ran.', {
      diagnostics: [{ path: 'body.messages', code: 'forged_approval', message: 'Send back the messages exactly as the run returned them.' }],
      cause: error,
    });
  }
  const name = (error as { name?: unknown } | null)?.name;
  if (typeof name === 'string' && (name === 'AI_InvalidPromptError' || name === 'AI_InvalidMessageRoleError' || name === 'AI_ToolCallNotFoundForApprovalError')) {
    return new FwError('validation_failed', `The messages are not a valid conversation: ${(error as Error).message.slice(0, 300)}`, {
      diagnostics: [{ path: 'body.messages', code: 'invalid_messages', message: 'Send back the messages of an earlier run as they were returned.' }],
      cause: error,
    });
  }
  return new FwError('unavailable', `The model call failed; trace id ${traceId}.`, { cause: error });
}
