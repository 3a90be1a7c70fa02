/**
 * The approvals fw asked for, held in the database (`_fw.ai_approvals`), so that an approval is valid
 * exactly once, only for the user and tenant that were asked, only for that agent, tool, tool call and
 * input, and only until it expires — across processes and restarts, and under concurrent resends.
 *
 * The AI SDK's signature (`experimental_toolApprovalSecret`) proves an approval request came from this
 * server; it does not say for whom, nor whether it was used. A client-sent history is data, not proof:
 * the ledger is what decides.
 *
 * @example
 *   await issueApprovals(db, binding, [{ approvalId, toolCallId, toolName, input }], { now, ttlMs });
 *   await decideApprovals(db, binding, decisions, messages, { now, traceId });   // throws 403 on any misuse
 */
import { createHash, randomUUID } from 'node:crypto';
import type { ModelMessage } from 'ai';
import { sql } from 'kysely';
import type { FwDatabase } from '../db/database.ts';
import { FwError } from '../core/errors.ts';

/** Who was asked: an approval is only good for this caller and agent. */
export interface ApprovalBinding {
  userId: string | null;
  tenantId: string | null;
  /** The agent's name (`(inline)` for a definition passed to ctx.ai.runAgent). */
  agent: string;
}

export interface IssuedApproval {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
}

export interface Decision {
  approvalId: string;
  approved: boolean;
}

/** How long a human has to answer (default 15 minutes; `approvalTtlMs` / `FW_AI_APPROVAL_TTL_MS`). */
export const DEFAULT_APPROVAL_TTL_MS = 15 * 60_000;

/** Records approvals the run is about to ask for. Idempotent per approval id. */
export async function issueApprovals(db: FwDatabase, binding: ApprovalBinding, approvals: readonly IssuedApproval[], options: { now: Date; ttlMs: number; traceId: string }): Promise<void> {
  if (approvals.length === 0) return;
  const expires = new Date(options.now.getTime() + options.ttlMs);
  await db.admin
    .insertInto('_fw.ai_approvals')
    .values(
      approvals.map((a) => ({
        approval_id: a.approvalId,
        user_id: binding.userId,
        tenant_id: binding.tenantId,
        agent: binding.agent,
        tool: a.toolName,
        tool_call_id: a.toolCallId,
        input_hash: inputHash(a.input),
        issued_at: options.now,
        expires_at: expires,
        issued_trace_id: options.traceId,
      })),
    )
    .onConflict((oc) => oc.column('approval_id').doNothing())
    .execute();
}

/**
 * Marks every decision of a request as made, all or none, before any tool runs. Each must answer an
 * approval fw issued to this caller and agent for the very tool call in `messages`, not decided before
 * and not expired; otherwise nothing is recorded and the request is refused (403 `forbidden`).
 */
export async function decideApprovals(
  db: FwDatabase,
  binding: ApprovalBinding,
  decisions: readonly Decision[],
  messages: readonly ModelMessage[],
  options: { now: Date; traceId: string },
): Promise<void> {
  if (decisions.length === 0) return;
  const asked = toolCallsByApproval(messages);
  await db.admin.transaction().execute(async (trx) => {
    for (const decision of decisions) {
      const call = asked.get(decision.approvalId);
      const taken = call
        ? await sql<{ approval_id: string }>`
            update "_fw"."ai_approvals" set decided_at = ${options.now}, approved = ${decision.approved}, decided_trace_id = ${options.traceId}
            where approval_id = ${decision.approvalId} and decided_at is null
              and user_id is not distinct from ${binding.userId} and tenant_id is not distinct from ${binding.tenantId}::uuid
              and agent = ${binding.agent} and tool = ${call.toolName} and tool_call_id = ${call.toolCallId}
              and input_hash = ${inputHash(call.input)} and expires_at > ${options.now}
            returning approval_id`.execute(trx)
        : { rows: [] };
      if (taken.rows.length === 1) continue;
      // Nothing was taken: say why (reading the row in the same transaction, which rolls back).
      const row = (
        await sql<{ user_id: string | null; tenant_id: string | null; agent: string; tool: string; tool_call_id: string; input_hash: string; expires_at: Date; decided_at: Date | null }>`
          select user_id, tenant_id::text, agent, tool, tool_call_id, input_hash, expires_at, decided_at
          from "_fw"."ai_approvals" where approval_id = ${decision.approvalId}`.execute(trx)
      ).rows[0];
      throw refusal(decision.approvalId, diagnose(row, call, binding, options.now));
    }
  });
}

/** Where an approval stands: asked and waiting, approved (its tool ran), refused, or expired undecided. */
export type ApprovalState = 'pending' | 'used' | 'refused' | 'expired';

export interface ApprovalRecord {
  approvalId: string;
  agent: string;
  tool: string;
  toolCallId: string;
  state: ApprovalState;
  issuedAt: string;
  expiresAt: string;
  decidedAt: string | null;
  /** The request that asked, and the one that decided (a later one: the run resumed with the decision). */
  issuedTraceId: string | null;
  decidedTraceId: string | null;
}

/** The approvals asked for or decided in the request `traceId`, oldest first (the dashboard's AI view). */
export async function approvalsOfTrace(db: FwDatabase, traceId: string): Promise<ApprovalRecord[]> {
  const result = await sql<{ approval_id: string; agent: string; tool: string; tool_call_id: string; issued_at: Date; expires_at: Date; decided_at: Date | null; approved: boolean | null; expired: boolean; issued_trace_id: string | null; decided_trace_id: string | null }>`
    select approval_id, agent, tool, tool_call_id, issued_at, expires_at, decided_at, approved, expires_at <= now() as expired, issued_trace_id, decided_trace_id
    from "_fw"."ai_approvals" where issued_trace_id = ${traceId} or decided_trace_id = ${traceId}
    order by issued_at, approval_id`.execute(db.admin);
  return result.rows.map((row) => ({
    approvalId: row.approval_id,
    agent: row.agent,
    tool: row.tool,
    toolCallId: row.tool_call_id,
    state: row.decided_at === null ? (row.expired ? 'expired' : 'pending') : row.approved ? 'used' : 'refused',
    issuedAt: new Date(row.issued_at).toISOString(),
    expiresAt: new Date(row.expires_at).toISOString(),
    decidedAt: row.decided_at === null ? null : new Date(row.decided_at).toISOString(),
    issuedTraceId: row.issued_trace_id,
    decidedTraceId: row.decided_trace_id,
  }));
}

type Refusal = 'forged_approval' | 'approval_used' | 'approval_wrong_caller' | 'approval_wrong_agent' | 'approval_expired';

function diagnose(
  row: { user_id: string | null; tenant_id: string | null; agent: string; tool: string; tool_call_id: string; input_hash: string; expires_at: Date; decided_at: Date | null } | undefined,
  call: { toolCallId: string; toolName: string; input: unknown } | undefined,
  binding: ApprovalBinding,
  now: Date,
): Refusal {
  if (!row || !call) return 'forged_approval';
  if (row.user_id !== binding.userId || row.tenant_id !== binding.tenantId) return 'approval_wrong_caller';
  if (row.decided_at) return 'approval_used';
  if (row.agent !== binding.agent) return 'approval_wrong_agent';
  if (row.tool !== call.toolName || row.tool_call_id !== call.toolCallId || row.input_hash !== inputHash(call.input)) return 'forged_approval';
  if (new Date(row.expires_at).getTime() <= now.getTime()) return 'approval_expired';
  return 'approval_used'; // decided concurrently between the update and this read
}

const refusals: Record<Refusal, { message: string; hint: string }> = {
  forged_approval: {
    message: 'An approval in the history was not issued by this server for this tool call (unknown, or its tool call was changed); no tool ran.',
    hint: 'Send back the messages exactly as the run returned them.',
  },
  approval_used: { message: 'This approval was already decided; an approval is used once and no tool ran again.', hint: 'Start a new run to ask again.' },
  approval_wrong_caller: { message: 'This approval was asked of another user or tenant; no tool ran.', hint: 'Only the user who was asked may decide an approval.' },
  approval_wrong_agent: { message: 'This approval was asked by another agent; no tool ran.', hint: 'Resume the run with the agent that asked.' },
  approval_expired: { message: 'This approval expired before it was decided; no tool ran.', hint: 'Start a new run to ask again (approvals expire after FW_AI_APPROVAL_TTL_MS, default 15 minutes).' },
};

function refusal(approvalId: string, code: Refusal): FwError {
  const { message, hint } = refusals[code];
  return new FwError('forbidden', message, { diagnostics: [{ path: 'body.approvals', code, message: `Approval "${approvalId.slice(0, 200)}".`, hint }] });
}

/** approvalId → the tool call it asks about, as the history shows it. */
function toolCallsByApproval(messages: readonly ModelMessage[]): Map<string, { toolCallId: string; toolName: string; input: unknown }> {
  const calls = new Map<string, { toolName: string; input: unknown }>();
  const out = new Map<string, { toolCallId: string; toolName: string; input: unknown }>();
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type === 'tool-call') calls.set(part.toolCallId, { toolName: part.toolName, input: part.input });
    }
    for (const part of message.content) {
      const call = part.type === 'tool-approval-request' ? calls.get(part.toolCallId) : undefined;
      if (part.type === 'tool-approval-request' && call) out.set(part.approvalId, { toolCallId: part.toolCallId, ...call });
    }
  }
  return out;
}

/** A hash of a tool input as JSON (key order as given: the history returns the input as fw sent it). */
export function inputHash(input: unknown): string {
  return createHash('sha256').update(JSON.stringify(input ?? null)).digest('hex');
}

/**
 * MCP approvals (runtime/http/mcp.ts), in the same ledger: asked by an MCP tool call that needs one,
 * decided by a human on a channel the agent does not hold (the dashboard, `POST /_fw/mcp/approvals/:id`
 * with the admin token, or the app's own UI through {@link decideMcpApproval}), then used once by the
 * same caller's call of the same tool with the same input. Agent `mcp`; the tool call id is the
 * approval's own id (an MCP call has no other).
 */
export const MCP_AGENT = 'mcp';

/** Who asked over MCP: an approval is good for this user and tenant only. */
export interface McpApprovalBinding {
  userId: string | null;
  tenantId: string | null;
}

/** What an MCP call found in the ledger for its caller, tool and input. */
export type McpApprovalLookup =
  | { state: 'used'; approvalId: string }
  | { state: 'refused'; approvalId: string }
  | { state: 'pending'; approvalId: string; expiresAt: string }
  | { state: 'none' };

/**
 * Uses an approved, unused, unexpired approval of this caller for `tool` and `input` (the oldest); or
 * takes a refusal not told yet (told once: the next call asks again); or says there is one still
 * waiting for its decision, or none. Taking one is one update: two concurrent calls cannot both take it.
 */
export async function useMcpApproval(db: FwDatabase, binding: McpApprovalBinding, tool: string, input: unknown, options: { now: Date; traceId: string }): Promise<McpApprovalLookup> {
  const hash = inputHash(input);
  const used = await sql<{ approval_id: string }>`
    update "_fw"."ai_approvals" set used_at = ${options.now}, used_trace_id = ${options.traceId}
    where approval_id = (
      select approval_id from "_fw"."ai_approvals"
      where agent = ${MCP_AGENT} and approved and used_at is null and expires_at > ${options.now}
        and user_id is not distinct from ${binding.userId} and tenant_id is not distinct from ${binding.tenantId}::uuid
        and tool = ${tool} and input_hash = ${hash}
      order by issued_at, approval_id limit 1 for update skip locked)
      and used_at is null
    returning approval_id`.execute(db.admin);
  if (used.rows[0]) return { state: 'used', approvalId: used.rows[0].approval_id };
  const refused = await sql<{ approval_id: string }>`
    update "_fw"."ai_approvals" set used_at = ${options.now}, used_trace_id = ${options.traceId}
    where approval_id = (
      select approval_id from "_fw"."ai_approvals"
      where agent = ${MCP_AGENT} and approved = false and used_at is null
        and user_id is not distinct from ${binding.userId} and tenant_id is not distinct from ${binding.tenantId}::uuid
        and tool = ${tool} and input_hash = ${hash}
      order by issued_at, approval_id limit 1 for update skip locked)
      and used_at is null
    returning approval_id`.execute(db.admin);
  if (refused.rows[0]) return { state: 'refused', approvalId: refused.rows[0].approval_id };
  const pending = await sql<{ approval_id: string; expires_at: Date }>`
    select approval_id, expires_at from "_fw"."ai_approvals"
    where agent = ${MCP_AGENT} and decided_at is null and expires_at > ${options.now}
      and user_id is not distinct from ${binding.userId} and tenant_id is not distinct from ${binding.tenantId}::uuid
      and tool = ${tool} and input_hash = ${hash}
    order by issued_at, approval_id limit 1`.execute(db.admin);
  const row = pending.rows[0];
  return row ? { state: 'pending', approvalId: row.approval_id, expiresAt: new Date(row.expires_at).toISOString() } : { state: 'none' };
}

/** Asks for an approval of `tool` with `input` for this caller; answers its id and when it expires. */
export async function askMcpApproval(db: FwDatabase, binding: McpApprovalBinding, tool: string, input: unknown, options: { now: Date; ttlMs: number; traceId: string }): Promise<{ approvalId: string; expiresAt: string }> {
  const approvalId = `mcp_${randomUUID()}`;
  await issueApprovals(db, { ...binding, agent: MCP_AGENT }, [{ approvalId, toolCallId: approvalId, toolName: tool, input }], options);
  // What the human is asked to approve: the call's input, shown to whoever decides (owner-only table).
  await sql`update "_fw"."ai_approvals" set input = ${JSON.stringify(input ?? null)}::jsonb where approval_id = ${approvalId}`.execute(db.admin);
  return { approvalId, expiresAt: new Date(options.now.getTime() + options.ttlMs).toISOString() };
}

/** An MCP approval as the dashboard and `GET /_fw/mcp/approvals` list it. */
export interface McpApprovalRecord {
  approvalId: string;
  userId: string | null;
  tenantId: string | null;
  tool: string;
  inputHash: string;
  /** The input the call was asked with: what the human approves. */
  input: unknown;
  state: 'pending' | 'approved' | 'used' | 'refused' | 'expired';
  issuedAt: string;
  expiresAt: string;
  issuedTraceId: string | null;
}

/** MCP approvals, newest first: those waiting for a decision first (`pending: true`), or all recent ones. */
export async function listMcpApprovals(db: FwDatabase, options: { now: Date; pendingOnly?: boolean; limit?: number }): Promise<McpApprovalRecord[]> {
  const limit = Math.min(Math.max(options.limit ?? 100, 1), 1000);
  const result = await sql<{ approval_id: string; user_id: string | null; tenant_id: string | null; tool: string; input_hash: string; input: unknown; issued_at: Date; expires_at: Date; decided_at: Date | null; approved: boolean | null; used_at: Date | null; issued_trace_id: string | null }>`
    select approval_id, user_id, tenant_id::text, tool, input_hash, input, issued_at, expires_at, decided_at, approved, used_at, issued_trace_id from "_fw"."ai_approvals"
    where agent = ${MCP_AGENT} and (not ${options.pendingOnly ?? false} or (decided_at is null and expires_at > ${options.now}))
    order by issued_at desc, approval_id limit ${limit}`.execute(db.admin);
  return result.rows.map((row) => ({
    approvalId: row.approval_id,
    userId: row.user_id,
    tenantId: row.tenant_id,
    tool: row.tool,
    inputHash: row.input_hash,
    input: row.input,
    state: row.used_at && row.approved ? 'used' : row.decided_at ? (row.approved ? 'approved' : 'refused') : new Date(row.expires_at).getTime() <= options.now.getTime() ? 'expired' : 'pending',
    issuedAt: new Date(row.issued_at).toISOString(),
    expiresAt: new Date(row.expires_at).toISOString(),
    issuedTraceId: row.issued_trace_id,
  }));
}

/**
 * Records a human's decision on an MCP approval, once, before it expires. `decider`, when given, must
 * be the user and tenant that were asked (the app's own UI deciding for its signed-in user); without
 * it the decision is an operator's (the dashboard, the admin token). Refused: 403 with a diagnostic code.
 */
export async function decideMcpApproval(db: FwDatabase, approvalId: string, approved: boolean, options: { now: Date; traceId: string; decider?: McpApprovalBinding }): Promise<void> {
  const decider = options.decider;
  const taken = await sql<{ approval_id: string }>`
    update "_fw"."ai_approvals" set decided_at = ${options.now}, approved = ${approved}, decided_trace_id = ${options.traceId}
    where approval_id = ${approvalId} and agent = ${MCP_AGENT} and decided_at is null and expires_at > ${options.now}
      and (${decider === undefined} or (user_id is not distinct from ${decider?.userId ?? null} and tenant_id is not distinct from ${decider?.tenantId ?? null}::uuid))
    returning approval_id`.execute(db.admin);
  if (taken.rows.length === 1) return;
  const row = (
    await sql<{ user_id: string | null; tenant_id: string | null; decided_at: Date | null; expires_at: Date }>`
      select user_id, tenant_id::text, decided_at, expires_at from "_fw"."ai_approvals" where approval_id = ${approvalId} and agent = ${MCP_AGENT}`.execute(db.admin)
  ).rows[0];
  const code: Refusal = !row
    ? 'forged_approval'
    : decider && (row.user_id !== decider.userId || row.tenant_id !== decider.tenantId)
      ? 'approval_wrong_caller'
      : row.decided_at
        ? 'approval_used'
        : 'approval_expired';
  throw refusal(approvalId, code);
}
