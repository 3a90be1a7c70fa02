import type { ExternalRef } from './api-types.ts';

/**
 * What an external service's entries read and write, for the query caches: one name per service. The
 * bridge cannot know what a service's command changes in the service, so every external query of a
 * service is re-read after any of its commands succeeds (its declared effects on the app's own tables
 * reach live queries through the live log, as every write does).
 *
 * @example
 *   externalTable(api.external.tickets.queries.listTickets) // 'external:tickets'
 */
export function externalTable(ref: Pick<ExternalRef, 'service'>): string {
  return `external:${ref.service}`;
}
