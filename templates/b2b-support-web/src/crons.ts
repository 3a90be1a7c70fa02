import { crons } from 'fwjs';

// A cron runs as the system inside one tenant (or none, which sees no tenant's rows), so a per-tenant
// job is declared per customer organisation: here the two demo tenants of the web app's identity
// switcher. Every night at 02:00 UTC each records its digest (src/commands/recordDigest.ts).
export const ACME = '00000000-0000-4000-8000-000000000001';
export const GLOBEX = '00000000-0000-4000-8000-000000000002';

export default crons({
  acmeNightlyDigest: { cron: '0 2 * * *', call: 'recordDigest', tenant: ACME },
  globexNightlyDigest: { cron: '0 2 * * *', call: 'recordDigest', tenant: GLOBEX },
});
