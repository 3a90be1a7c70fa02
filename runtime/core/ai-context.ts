import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { ModelMessage } from 'ai';
import type { AgentDefinition } from './ai-definitions.ts';

// What handlers see of the AI runtime (`ctx.ai`, `ctx.agent`) and what a run returns: kept apart from
// ai-runtime.ts so that the entry contexts (entries.ts) import these types without the runtime.

/** An approval decision for a paused run. */
export interface ApprovalDecision {
  approvalId: string;
  approved: boolean;
  reason?: string;
}

export interface AgentRunRequest {
  /** The agent's name; may be left out when the app has exactly one agent. */
  agent?: string;
  prompt?: string;
  /** The history to continue (the `messages` of an earlier result). */
  messages?: ModelMessage[];
  /** Decisions for the pending approvals of the history. */
  approvals?: ApprovalDecision[];
  /** Lowers the agent's step limit for this run; never raises it. */
  maxSteps?: number;
}

export interface AgentRunResult {
  agent: string;
  status: 'completed' | 'awaiting-approval';
  text: string;
  steps: Array<{ step: number; finishReason: string; toolCalls: ToolCallView[]; usage: Usage }>;
  toolCalls: ToolCallView[];
  toolResults: ToolResultView[];
  /** Tool calls waiting for a decision: send them back as `approvals` with `messages` to resume. */
  pendingApprovals: Array<{ approvalId: string; toolCallId: string; toolName: string; input: unknown }>;
  /** The whole conversation so far, to continue it (approval requests in it are signed). */
  messages: ModelMessage[];
  usage: Usage;
  traceId: string;
}

export interface ToolCallView {
  toolCallId: string;
  toolName: string;
  input: unknown;
}
export type ToolResultView = { toolCallId: string; toolName: string } & ({ output: unknown } | { error: { code: string; message: string } } | { denied: true });
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** What actions, workflows, endpoints and server-only code get as `ctx.ai` and `ctx.agent`. */
export interface AiContext {
  agent: {
    /** Runs a named agent as the caller. Tools that need approval do not run: they come back in `pendingApprovals`. */
    run(request: { agent: string; prompt: string; maxSteps?: number }): Promise<AgentRunResult>;
  };
  ai: {
    /** The lower-level run: a named agent or a definition, a prompt or a history, approval decisions. */
    runAgent(request: Omit<AgentRunRequest, 'agent'> & { agent: string | AgentDefinition }): Promise<AgentRunResult>;
    /** One model answer, no tools. */
    generateText(request: GenerateRequest): Promise<{ text: string; usage: Usage; traceId: string }>;
    /** One model answer shaped by `schema`, validated against it before it is returned. */
    generateStructured<S extends StandardSchemaV1>(request: GenerateRequest & { schema: S }): Promise<{ object: StandardSchemaV1.InferOutput<S>; usage: Usage; traceId: string }>;
  };
}

export interface GenerateRequest {
  prompt: string;
  instructions?: string;
  /** Default `FW_AI_MODEL`, else `openai/gpt-4o-mini`. */
  model?: string;
  provider?: 'gateway' | 'mock';
}

