/**
 * fw's own tables in its private schema (`_fw`, made by `secretsTableSql`), created by `createDatabase`
 * under its setup lock — so they exist for every process, `fw start` without `--migrate` included —
 * and readable by the owner only.
 *
 * `_fw.ai_approvals`: one row per approval fw asked a human for (runtime/ai/approval-ledger.ts). It
 * binds the approval to who was asked (user, tenant), the agent, the tool, the tool call and a hash of
 * its input, and expires; `decided_at` is set once, by the request that carries the decision. An MCP
 * approval (agent `mcp`, runtime/http/mcp.ts) is decided by a human on another channel and then used
 * once by the call it was asked for: `used_at`, set once.
 *
 * `_fw.mcp_audit`: one row per MCP tool call (runtime/http/mcp.ts): who (user, tenant, role, auth
 * kind — from the verified identity, never from the row's text), the client as it named itself, the
 * entry, a digest of the args, the outcome and the trace id. A command that commits writes its row in
 * its own transaction through `_fw.mcp_audit(row, proof)` (db/ddl.ts); every other call's row is the
 * owner's. The request roles have no privilege on it: handler SQL can neither add, change nor read a row.
 *
 * `_fw.live_nodes` and `_fw.live_groups`: the live hubs of the processes sharing a PostgreSQL database
 * (runtime/live/hub/cluster.ts). A node is one process's hub, alive while its lease runs; a group row
 * names the node that reruns the group (its owner, fenced by `epoch`) and holds the result it last
 * published for the others (`version` from `live_group_versions`: never reused, so a row made again after
 * pruning never looks older). Owner-only: a result handler SQL could write would reach other callers.
 * Unlogged: what they hold is derived and short-lived (a crash empties them and the processes claim
 * their groups again), and a publication then commits without waiting for the WAL to reach disk.
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
  `alter table "_fw"."ai_approvals" add column if not exists used_at timestamptz, add column if not exists used_trace_id text, add column if not exists input jsonb`,
  `create table if not exists "_fw"."mcp_audit" (
    id bigserial primary key,
    at timestamptz not null default now(),
    user_id text,
    tenant_id uuid,
    role text,
    auth_kind text,
    client text,
    entry text not null,
    kind text not null,
    args_digest text not null,
    outcome text not null,
    trace_id text,
    approval_id text
  )`,
  `create index if not exists "mcp_audit_at" on "_fw"."mcp_audit" (at)`,
  `revoke all on "_fw"."mcp_audit" from public`,
  `revoke all on sequence "_fw"."mcp_audit_id_seq" from public`,
  `create unlogged table if not exists "_fw"."live_nodes" (
    node text primary key,
    expires_at timestamptz not null
  )`,
  `revoke all on "_fw"."live_nodes" from public`,
  `create sequence if not exists "_fw"."live_group_versions"`,
  `revoke all on sequence "_fw"."live_group_versions" from public`,
  `create unlogged table if not exists "_fw"."live_groups" (
    group_hash text primary key,
    group_key text not null,
    node text,
    epoch bigint not null default 1,
    version bigint not null default 0,
    revision bigint,
    covers bigint[],
    result text,
    error jsonb,
    read_set text,
    touched_at timestamptz not null default now()
  )`,
  `revoke all on "_fw"."live_groups" from public`,
];
