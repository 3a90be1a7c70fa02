import type { DevAuth } from '../lib/fw.ts';

// Fixed dev values: one user, two tenants (to see isolation), the two roles the policies know.
// The tenant ids are the demo workspaces' (src/auth/workspaces.ts), which src/crons.ts records nightly
// digests for. The built app signs in for real instead (web/src/auth/, README "Signing in").
const tenants = [
  { id: '00000000-0000-4000-8000-000000000001', name: 'Acme' },
  { id: '00000000-0000-4000-8000-000000000002', name: 'Globex' },
];
const roles = ['agent', 'admin'];

export const defaultDevIdentity: DevAuth = { userId: 'dev-user', tenantId: tenants[0]!.id, role: 'agent' };

/**
 * Development only: act as an agent or an admin of one of two tenants, to see the role policies
 * (only admins may assign) and tenant isolation (each tenant sees only its own tickets) at work.
 */
export function DevIdentitySwitcher({ value, onChange }: { value: DevAuth; onChange(identity: DevAuth): void }) {
  return (
    <div role="group" aria-label="Development identity" className="identity" title="Development only: who the dev headers say you are">
      <span className="identity-label" aria-hidden="true">
        Acting as
      </span>
      <label>
        <span className="visually-hidden">Tenant</span>
        <select value={value.tenantId} onChange={(e) => onChange({ ...value, tenantId: e.target.value })}>
          {tenants.map((tenant) => (
            <option key={tenant.id} value={tenant.id}>
              {tenant.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span className="visually-hidden">Role</span>
        <select value={value.role} onChange={(e) => onChange({ ...value, role: e.target.value })}>
          {roles.map((role) => (
            <option key={role} value={role}>
              {role}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}
