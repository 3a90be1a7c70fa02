import { crons } from 'fwjs';
import { ACME, GLOBEX } from './auth/workspaces.ts';

// A cron runs as the system inside one tenant (or none, which sees no tenant's rows), so a per-tenant
// job is declared per customer organisation: here the two demo workspaces (src/auth/workspaces.ts).
// Every night at 02:00 UTC each records its digest (src/commands/recordDigest.ts).
export { ACME, GLOBEX };

export default crons({
  acmeNightlyDigest: { cron: '0 2 * * *', call: 'recordDigest', tenant: ACME },
  globexNightlyDigest: { cron: '0 2 * * *', call: 'recordDigest', tenant: GLOBEX },
});
