import { sql } from 'kysely';
import type { FwDatabase } from '../db/database.ts';
import { AI_RUNS_TABLE } from '../db/ddl.ts';
import type { Auth } from '../core/entry-types.ts';
import type { ToolCallRecord } from './tool-set.ts';
import { printable } from '../core/printable.ts';

/** One model step of a run: what it cost and what it called — never what was said. */
export interface TraceStep {
  step: number;
  provider: string;
  model: string;
  finishReason: string;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  toolCalls: Array<ToolCallRecord | { toolCallId: string; tool: string; outcome: 'awaiting-approval' | 'denied' }>;
}

/** A tool call with what it was given and what it answered (kept only with `recordContent`). */
export interface RecordedToolCall {
  toolCallId: string;
  tool: string;
  input: unknown;
  /** What the tool returned; absent when it failed, waits for approval or was denied. */
  output?: unknown;
  /** Its error as the model was told it (redacted: the code and trace id for anything not the caller's). */
  error?: { code: string; message: string };
}

/** An approval decision the caller sent with a resumed run. */
export interface TraceApproval {
  approvalId: string;
  tool: string | null;
  approved: boolean;
}

/** One agent run (or one `generateText`/`generateStructured` call) as telemetry keeps it. */
export interface AiTrace {
  traceId: string;
  kind: 'agent-run' | 'agent-chat' | 'generate-text' | 'generate-structured';
  agent: string | null;
  provider: string;
  model: string;
  status: 'completed' | 'awaiting-approval' | 'failed';
  errorCode: string | null;
  auth: Pick<Auth, 'userId' | 'tenantId'>;
  steps: TraceStep[];
  approvals: TraceApproval[];
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  /** USD, when the provider reports it (the AI Gateway does; the mock costs 0). */
  costUsd: number | null;
  /** Prompt and final text, and an agent's tool calls with their input and output, only when the app opted in (`recordContent`). */
  content: { prompt: string | null; text: string | null; toolCalls?: RecordedToolCall[] } | null;
  createdAt?: string;
}

/**
 * Writes one trace. Telemetry never fails a run: a write error is reported and swallowed.
 */
export async function recordTrace(db: FwDatabase, trace: AiTrace): Promise<void> {
  try {
    await db.admin
      .insertInto(AI_RUNS_TABLE)
      .values({
        trace_id: trace.traceId,
        kind: trace.kind,
        agent: trace.agent,
        provider: trace.provider,
        model: trace.model,
        status: trace.status,
        error_code: trace.errorCode,
        tenant_id: trace.auth.tenantId,
        user_id: trace.auth.userId,
        steps: sql`${JSON.stringify(trace.steps)}::jsonb`,
        approvals: sql`${JSON.stringify(trace.approvals)}::jsonb`,
        input_tokens: trace.inputTokens,
        output_tokens: trace.outputTokens,
        latency_ms: trace.latencyMs,
        cost_usd: trace.costUsd,
        content: trace.content === null ? null : sql`${JSON.stringify(trace.content)}::jsonb`,
      })
      .execute();
  } catch (error) {
    console.error(`fw: could not record AI trace ${printable(trace.traceId)}: ${printable(error instanceof Error ? error.message : String(error))}`);
  }
}

/** The runs recorded under one trace id, oldest first. */
export async function readTrace(db: FwDatabase, traceId: string): Promise<AiTrace[]> {
  const rows = await db.admin.selectFrom(AI_RUNS_TABLE).selectAll().where('trace_id', '=', traceId).orderBy('id').execute();
  return rows.map((row: Record<string, any>) => ({
    traceId: row.trace_id,
    kind: row.kind,
    agent: row.agent,
    provider: row.provider,
    model: row.model,
    status: row.status,
    errorCode: row.error_code,
    auth: { userId: row.user_id, tenantId: row.tenant_id },
    steps: row.steps,
    approvals: row.approvals,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    latencyMs: row.latency_ms,
    costUsd: row.cost_usd === null ? null : Number(row.cost_usd),
    content: row.content,
    createdAt: new Date(row.created_at).toISOString(),
  }));
}

/** The most recent traces (newest first), for `fw ai trace --json` without an id. */
export async function listTraces(db: FwDatabase, limit = 20): Promise<Array<Pick<AiTrace, 'traceId' | 'kind' | 'agent' | 'status' | 'createdAt'>>> {
  const rows = await db.admin.selectFrom(AI_RUNS_TABLE).select(['trace_id', 'kind', 'agent', 'status', 'created_at']).orderBy('id', 'desc').limit(limit).execute();
  return rows.map((row: Record<string, any>) => ({ traceId: row.trace_id, kind: row.kind, agent: row.agent, status: row.status, createdAt: new Date(row.created_at).toISOString() }));
}
