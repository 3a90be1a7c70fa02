import { query } from 'fwjs';
import { workspaces } from '../auth/workspaces.ts';

// The tenants the nightly digest runs in (src/crons.ts, forEachTenant): each night fw asks this query,
// as the system, and records a digest in every workspace it names — a new workspace needs no new cron.
// A real product would read them from a table an operator manages (not tenant-scoped); two fixed ones
// keep the demo small.
export default query({ policy: 'system', handler: () => workspaces.map((workspace) => workspace.tenantId) });
