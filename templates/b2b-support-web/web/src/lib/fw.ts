// The bridge between this web app and its backend: components import hooks from here, never from
// src/fw/_generated directly. `fw generate` (run by `fw dev`) keeps the api it reads up to date.
import type { ResultOf } from 'fwjs/client';
import { createFwReact } from 'fwjs/react';
import { api } from '../../../src/fw/_generated/api.ts';

export { api };
export const { FwProvider, useCommand, useQuery, useLiveQuery, usePaginatedLiveQuery, useFwClient, useFwRuntime } = createFwReact(api);

export type { DevAuth, FwError, LiveStatus } from 'fwjs/react';

/** A ticket as the client receives it (dates as ISO strings). */
export type Ticket = ResultOf<typeof api.queries.listTickets>[number];
export type TicketStatus = Ticket['status'];
export type TicketPriority = Ticket['priority'];
/** One comment of a ticket's conversation. */
export type Comment = ResultOf<typeof api.liveQueries.liveTicket>['comments'][number];
