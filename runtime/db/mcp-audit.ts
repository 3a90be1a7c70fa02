/**
 * The audit of MCP tool calls, `_fw.mcp_audit` (db/private-tables.ts): one row per `tools/call`, owner-only.
 * Two ways in, both fw's own, neither open to handler SQL:
 *
 * - {@link auditInTransaction}: a command that commits records its call in its own transaction, so the
 *   write and its record commit together or not at all — through `_fw.mcp_audit(row, proof)`, which
 *   takes user, tenant, role and auth kind from the transaction's verified claim and refuses the call
 *   without fw's proof for this transaction and this row (as `_fw.enqueue` does, db/outbox.ts);
 * - {@link createOwnerAudit}: every other call (a query runs read-only; a refused or failed call rolled its
 *   transaction back, or had none), written by fw as the owner once the call is over, gathered
 *   with the rows of concurrent calls into one insert.
 */
import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Auth } from '../core/entry-types.ts';
import { proofOf } from './proof-request.ts';

/** What one audit row says beside who called (which comes from the verified identity). */
export interface McpAuditRow {
  /** The client as it named itself (its User-Agent): informative, not proof. */
  client: string | null;
  entry: string;
  kind: string;
  /** {@link argsDigest} of the args as sent. */
  argsDigest: string;
  /** `ok`, `approval_required`, or fw's error code. */
  outcome: string;
  traceId: string | null;
  /** The approval the call used or asked for. */
  approvalId: string | null;
}

/** sha256 over the args as JSON: enough to match a call to its approval or a complaint, without keeping the values. */
export function argsDigest(args: unknown): string {
  return createHash('sha256').update(JSON.stringify(args ?? null)).digest('hex');
}

function rowText(row: McpAuditRow): string {
  return JSON.stringify({ client: row.client, entry: row.entry, kind: row.kind, args_digest: row.argsDigest, outcome: row.outcome, trace_id: row.traceId, approval_id: row.approvalId });
}

/** Records `row` in the request transaction `trx`, as its verified caller (fw's proof travels as a bound parameter). */
export async function auditInTransaction(trx: Kysely<any>, row: McpAuditRow): Promise<void> {
  const text = rowText(row);
  await sql`select "_fw"."mcp_audit"(${text}, ${proofOf('mcp_audit', text)})`.execute(trx);
}

/** Records a row as the owner for `auth`, the caller fw verified; settles once it is committed. */
export type OwnerAudit = (auth: Auth, row: McpAuditRow) => Promise<void>;

/** The most rows one insert carries. */
const BATCH_ROWS = 200;

/**
 * Owner writes of audit rows, gathered (group commit): while one insert runs, the rows that arrive
 * wait and go together in the next — one statement and one transaction for many calls under load,
 * and no wait at all when calls are few. Each call still waits for its own row to be committed
 * before it answers, as a write of its own would.
 */
export function createOwnerAudit(admin: Kysely<any>): OwnerAudit {
  let waiting: Array<{ auth: Auth; row: McpAuditRow; done: (error?: unknown) => void }> = [];
  let writing = false;

  async function write(): Promise<void> {
    writing = true;
    while (waiting.length > 0) {
      const batch = waiting.slice(0, BATCH_ROWS);
      waiting = waiting.slice(BATCH_ROWS);
      try {
        await insertRows(admin, batch);
        for (const { done } of batch) done();
      } catch (error) {
        for (const { done } of batch) done(error);
      }
    }
    writing = false;
  }

  return (auth, row) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ auth, row, done: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!writing) void write();
    });
}

async function insertRows(admin: Kysely<any>, rows: ReadonlyArray<{ auth: Auth; row: McpAuditRow }>): Promise<void> {
  const values = rows.map(
    ({ auth, row }) =>
      sql`(${auth.userId}, ${auth.tenantId}::uuid, ${auth.role}, ${auth.kind}, ${row.client}, ${row.entry}, ${row.kind}, ${row.argsDigest}, ${row.outcome}, ${row.traceId}, ${row.approvalId})`,
  );
  await sql`insert into "_fw"."mcp_audit" (user_id, tenant_id, role, auth_kind, client, entry, kind, args_digest, outcome, trace_id, approval_id)
    values ${sql.join(values)}`.execute(admin);
}

/** An audit row as `GET /_fw/mcp/audit` and the dashboard show it. */
export interface McpAuditRecord {
  id: number;
  at: string;
  userId: string | null;
  tenantId: string | null;
  role: string | null;
  authKind: string | null;
  client: string | null;
  entry: string;
  kind: string;
  argsDigest: string;
  outcome: string;
  traceId: string | null;
  approvalId: string | null;
}

/** The latest audit rows, newest first (at most `limit`, default 100), optionally of one trace. */
export async function readMcpAudit(admin: Kysely<any>, options: { limit?: number; traceId?: string } = {}): Promise<McpAuditRecord[]> {
  const limit = Math.min(Math.max(options.limit ?? 100, 1), 1000);
  const result = await sql<{ id: string; at: Date; user_id: string | null; tenant_id: string | null; role: string | null; auth_kind: string | null; client: string | null; entry: string; kind: string; args_digest: string; outcome: string; trace_id: string | null; approval_id: string | null }>`
    select id, at, user_id, tenant_id::text, role, auth_kind, client, entry, kind, args_digest, outcome, trace_id, approval_id from "_fw"."mcp_audit"
    where ${options.traceId ?? null}::text is null or trace_id = ${options.traceId ?? null}
    order by id desc limit ${limit}`.execute(admin);
  return result.rows.map((row) => ({
    id: Number(row.id),
    at: new Date(row.at).toISOString(),
    userId: row.user_id,
    tenantId: row.tenant_id,
    role: row.role,
    authKind: row.auth_kind,
    client: row.client,
    entry: row.entry,
    kind: row.kind,
    argsDigest: row.args_digest,
    outcome: row.outcome,
    traceId: row.trace_id,
    approvalId: row.approval_id,
  }));
}
