import type { AppDefinition } from '../core/app-definition.ts';
import type { Auth } from '../core/entry-types.ts';
import type { FwDatabase } from '../db/database.ts';
import { listTables } from './dashboard-data.ts';

/**
 * What the dashboard offers to act as: the roles the app's policies (src/policies.ts) know, which of
 * them each policy lets in, and the tenants its data holds. A policy is a function of the caller, so
 * the roles are found by asking it: every string its source names is a candidate, and the policy is
 * called with a signed-in caller of each (and of none) — what it answers is what it allows. A policy
 * that reads more than the role (the user id, a tenant) may answer differently for a real caller; the
 * dashboard says "allows" only of what it saw.
 */
export interface PolicyRoles {
  /** Roles this policy let in, in the order the app's source names them. */
  roles: string[];
  /** It let in a signed-in caller with no role. */
  anyRole: boolean;
}

export interface Identities {
  roles: string[];
  policies: Record<string, PolicyRoles>;
  tenants: Array<{ tenantId: string; rows: number }>;
  /** Dev mode: running entries and the controls for time are available. */
  dev: boolean;
}

const ROLE = /^[A-Za-z][\w.:-]{0,39}$/;
const PROBE_TENANT = '00000000-0000-4000-8000-000000000000';

/** The string literals of the policies' source, as candidate roles. */
function candidateRoles(app: AppDefinition): string[] {
  const found = new Set<string>();
  for (const check of Object.values(app.policies)) {
    for (const match of Function.prototype.toString.call(check).matchAll(/(['"`])([^'"`\\\n]{1,40})\1/g)) {
      if (ROLE.test(match[2]!)) found.add(match[2]!);
    }
  }
  return [...found];
}

async function lets(check: (input: { auth: Auth }) => unknown, role: string | null): Promise<boolean> {
  try {
    return (await check({ auth: { kind: 'user', userId: 'fw-dashboard', tenantId: PROBE_TENANT, role } })) === true;
  } catch {
    return false;
  }
}

export async function policyRoles(app: AppDefinition): Promise<Pick<Identities, 'roles' | 'policies'>> {
  const candidates = candidateRoles(app);
  const policies: Record<string, PolicyRoles> = {};
  const roles = new Set<string>();
  for (const [name, check] of Object.entries(app.policies)) {
    const allowed: string[] = [];
    for (const role of candidates) if (await lets(check, role)) allowed.push(role);
    const anyRole = await lets(check, null);
    // A policy that lets in every candidate and no role at all is about something else than roles.
    policies[name] = { roles: anyRole ? [] : allowed, anyRole };
    if (!anyRole) for (const role of allowed) roles.add(role);
  }
  return { roles: [...roles], policies };
}

/** Roles, policies and the tenants the app's tenant-scoped tables hold rows of (most rows first). */
export async function dashboardIdentities(app: AppDefinition, db: FwDatabase, dev: boolean): Promise<Identities> {
  const rows = new Map<string, number>();
  for (const table of await listTables(db, app.schema)) {
    for (const { tenantId, rows: n } of table.tenants) if (tenantId) rows.set(tenantId, (rows.get(tenantId) ?? 0) + n);
  }
  const tenants = [...rows].map(([tenantId, n]) => ({ tenantId, rows: n })).sort((a, b) => b.rows - a.rows || a.tenantId.localeCompare(b.tenantId));
  return { ...(await policyRoles(app)), tenants, dev };
}
