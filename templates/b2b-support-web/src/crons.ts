import { crons } from 'fwjs';

// Every night at 02:00 UTC each workspace records its digest (src/commands/recordDigest.ts): the cron
// runs in every tenant src/queries/allWorkspaces.ts lists, as the system inside each one.
export default crons({
  nightlyDigest: { cron: '0 2 * * *', call: 'recordDigest', forEachTenant: 'allWorkspaces' },
});
