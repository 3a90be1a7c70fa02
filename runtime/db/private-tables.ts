/**
 * fw's own tables in its private schema (`_fw`, made by `secretsTableSql`), created by `createDatabase`
 * under its setup lock — so they exist for every process, `fw start` without `--migrate` included —
 * and readable by the owner only.
 *
 * `_fw.ai_approvals`: one row per approval fw asked a human for (runtime/ai/approval-ledger.ts). It
 * binds the approval to who was asked (user, tenant), the agent, the tool, the tool call and a hash of
 * its input, and expires; `decided_at` is set once, by the request that carries the decision.
 */
export const privateTablesSql: readonly string[] = [
  `create table if not exists "_fw"."ai_approvals" (
    approval_id text primary key,
    user_id text,
    tenant_id uuid,
    agent text not null,
    tool text not null,
    tool_call_id text not null,
    input_hash text not null,
    issued_at timestamptz not null,
    expires_at timestamptz not null,
    issued_trace_id text,
    decided_at timestamptz,
    approved boolean,
    decided_trace_id text
  )`,
  `create index if not exists "ai_approvals_expires_at" on "_fw"."ai_approvals" (expires_at)`,
  `revoke all on "_fw"."ai_approvals" from public`,
];
