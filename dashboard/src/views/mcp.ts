import { api, ApiError } from '../api.ts';
import { ago, badge, h, json, mount, table, when } from '../h.ts';
import { patch } from '../patch.ts';
import type { View } from '../shell.ts';

/** A row of `_fw.mcp_audit` as `GET /_fw/mcp/audit` gives it (runtime/db/mcp-audit.ts). */
interface AuditRow {
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
/** An MCP approval as `GET /_fw/mcp/approvals` lists it (runtime/ai/approval-ledger.ts). */
interface Approval {
  approvalId: string;
  userId: string | null;
  tenantId: string | null;
  tool: string;
  input: unknown;
  state: 'pending' | 'approved' | 'used' | 'refused' | 'expired';
  issuedAt: string;
  expiresAt: string;
}

const AUDIT_ROWS = 200;

/**
 * What agents did over MCP (docs/mcp.md): the calls waiting for a person's approval, decided here —
 * the operator's channel, which the agent does not hold — and the audit of every call, newest first.
 */
export const mcpView: View = {
  id: 'mcp',
  title: 'MCP',
  render(container) {
    const approvalsBox = h('div');
    const auditBox = h('div');
    const notice = h('p', { class: 'hint', role: 'status', 'aria-live': 'polite' });
    mount(
      container,
      h(
        'article',
        { class: 'card', 'aria-labelledby': 'mcp-approvals-title' },
        h('h2', { id: 'mcp-approvals-title' }, 'Waiting for approval'),
        h('p', { class: 'hint' }, 'Calls an agent made over MCP that run only once a person approves them: each for the caller who asked, with these arguments, once. The agent calls again after the decision.'),
        notice,
        approvalsBox,
      ),
      h(
        'article',
        { class: 'card', 'aria-labelledby': 'mcp-audit-title' },
        h('h2', { id: 'mcp-audit-title' }, 'Audit'),
        h('p', { class: 'hint' }, 'Every MCP tool call, resource read and subscription: who (from the verified identity), the client as it names itself, the entry, a digest of the arguments, the outcome and its trace. Also: ', h('code', null, 'fw mcp audit'), '.'),
        auditBox,
      ),
    );

    const decide = async (approval: Approval, approved: boolean) => {
      try {
        await api(`/_fw/mcp/approvals/${encodeURIComponent(approval.approvalId)}`, { method: 'POST', body: { approved } });
        notice.textContent = `${approved ? 'Approved' : 'Refused'} ${approval.tool} for ${approval.userId ?? 'an anonymous caller'} (${approval.approvalId.slice(0, 8)}).`;
      } catch (error) {
        notice.textContent = error instanceof ApiError ? `${error.code}: ${error.message}` : String(error);
      }
      await view.refresh();
    };

    const view = {
      async refresh() {
        const [{ approvals }, { calls }] = await Promise.all([api<{ approvals: Approval[] }>('/_fw/mcp/approvals?pending=1'), api<{ calls: AuditRow[] }>(`/_fw/mcp/audit?limit=${AUDIT_ROWS}`)]);
        patch(
          approvalsBox,
          table(
            'MCP approvals waiting',
            [
              ['Tool', (a) => h('code', null, a.tool)],
              ['Arguments', (a) => h('code', { class: 'cell', title: json(a.input) }, JSON.stringify(a.input))],
              ['For', (a) => who(a.userId, a.tenantId)],
              ['Asked', (a) => h('span', { title: a.issuedAt }, ago(a.issuedAt))],
              ['Expires', (a) => h('span', { title: a.expiresAt }, when(a.expiresAt))],
              [
                'Actions',
                (a) =>
                  h(
                    'div',
                    { class: 'actions' },
                    h('button', { type: 'button', class: 'primary', 'aria-label': `Approve ${a.tool} ${a.approvalId.slice(0, 8)}`, on: { click: () => void decide(a, true) } }, 'Approve'),
                    h('button', { type: 'button', class: 'danger', 'aria-label': `Refuse ${a.tool} ${a.approvalId.slice(0, 8)}`, on: { click: () => void decide(a, false) } }, 'Refuse'),
                  ),
              ],
            ],
            approvals,
            'No call is waiting for approval.',
            { nowrap: true, key: (a) => a.approvalId },
          ),
        );
        patch(
          auditBox,
          table(
            'MCP audit',
            [
              ['When', (r) => h('span', { class: 'nowrap', title: r.at }, ago(r.at))],
              ['Who', (r) => who(r.userId, r.tenantId, r.role)],
              ['Client', (r) => (r.client ? h('span', { class: 'cell narrow', title: r.client }, r.client) : '—')],
              ['Entry', (r) => [h('code', null, r.entry), ' ', h('span', { class: 'muted' }, r.kind)]],
              ['Outcome', (r) => outcomeBadge(r.outcome)],
              ['Args', (r) => h('code', { class: 'muted', title: `sha256 of the arguments: ${r.argsDigest}` }, r.argsDigest.slice(0, 12))],
              ['Trace', (r) => (r.traceId ? h('a', { href: `#/requests/${r.traceId}` }, r.traceId.slice(0, 8)) : '—')],
            ],
            calls,
            'No MCP call yet. Agents connect at /mcp (docs/mcp.md).',
            { nowrap: true, key: (r) => String(r.id) },
          ),
        );
      },
    };
    return view;
  },
};

function who(userId: string | null, tenantId: string | null, role?: string | null): HTMLElement {
  const text = [userId ?? 'anonymous', role ? `(${role})` : null, tenantId ? `· tenant ${tenantId.slice(0, 8)}…` : null].filter(Boolean).join(' ');
  return h('span', { class: 'clip narrow', title: [userId ? `user ${userId}` : 'anonymous', tenantId ? `tenant ${tenantId}` : 'no tenant'].join(', ') }, text);
}

function outcomeBadge(outcome: string): HTMLElement {
  if (outcome === 'ok') return badge('ok', 'good');
  if (outcome === 'approval_required') return badge('approval required', 'wait');
  if (outcome === 'approval_refused') return badge('refused', 'bad');
  return badge(outcome, 'bad');
}
