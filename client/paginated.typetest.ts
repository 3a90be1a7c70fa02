// Type tests: checked by `npm run typecheck`, never run; every @ts-expect-error must stay an error.
// Paginated liveQueries and optimistic updates: what the hooks take and give, typed from the entries.
import { z } from 'zod';
import { command, liveQuery } from '../runtime/core/entries.ts';
import { paginate, paginationArgs } from '../runtime/core/paginate.ts';
import type { EntryRef } from './api-types.ts';
import { createFwReact } from './react/index.ts';
import { createFwVue } from './vue/index.ts';

interface Ticket {
  id: string;
  title: string;
  rank: number;
}
declare const query: Parameters<typeof paginate<{ tickets: Ticket }, 'tickets', Ticket>>[0];

const listTickets = liveQuery({
  args: { board: z.number().int(), page: paginationArgs },
  handler: (_ctx, args) => paginate(query, { orderBy: [['rank', 'desc'], ['id', 'desc']] }, args),
});
const liveTickets = liveQuery({ handler: () => [] as Ticket[] });
const createTicket = command({ args: { title: z.string() }, handler: () => 'ok' });

const api = {
  commands: { createTicket: { kind: 'command', name: 'createTicket', reads: [], writes: ['tickets'] } as EntryRef<'command', typeof createTicket> },
  queries: {},
  liveQueries: {
    listTickets: { kind: 'liveQuery', name: 'listTickets', reads: ['tickets'], writes: [] } as EntryRef<'liveQuery', typeof listTickets>,
    liveTickets: { kind: 'liveQuery', name: 'liveTickets', reads: ['tickets'], writes: [] } as EntryRef<'liveQuery', typeof liveTickets>,
  },
} as const;

const { usePaginatedLiveQuery, useCommand } = createFwReact(api);
const vue = createFwVue(api);

export function reactHooks() {
  const pages = usePaginatedLiveQuery('listTickets', { board: 1 }, { pageSize: 10 });
  const title: string | undefined = pages.results[0]?.title;
  const more: boolean = pages.loadMore();
  // @ts-expect-error a liveQuery without `page` is not paginated
  usePaginatedLiveQuery('liveTickets', {});
  // @ts-expect-error board must be a number
  usePaginatedLiveQuery('listTickets', { board: '1' });
  // A qualified column (a join) is accepted as any string: PostgreSQL checks it.
  void paginate(query, { orderBy: [['tickets.rank', 'desc']] }, { page: { cursor: null, numItems: 1 } });
  // @ts-expect-error a direction is asc or desc
  void paginate(query, { orderBy: [['rank', 'down']] }, { page: { cursor: null, numItems: 1 } });

  useCommand('createTicket', {
    optimistic: (store, args) => {
      const argTitle: string = args.title;
      store.setLive('liveTickets', {}, (tickets) => [...tickets, { id: 'pending', title: argTitle, rank: 0 }]);
      store.setPages('listTickets', { board: 1 }, (rows, { page }) => (page.cursor === null ? [{ id: 'p', title: argTitle, rank: 0 }, ...rows] : rows));
      // @ts-expect-error a ticket needs a rank
      store.setLive('liveTickets', {}, (tickets) => [...tickets, { id: 'pending', title: argTitle }]);
    },
  });
  return { title, more };
}

export function vueComposables() {
  const pages = vue.useFwPaginatedLiveQuery('listTickets', () => ({ board: 1 }));
  const rank: number | undefined = pages.results.value[0]?.rank;
  vue.useFwCommand('createTicket', { optimistic: (store) => store.setLive('liveTickets', {}, []) });
  return { rank };
}
export function byRef() {
  // @ts-expect-error by ref too, board must be a number
  usePaginatedLiveQuery(api.liveQueries.listTickets, { board: 'x' });
  // @ts-expect-error rows are tickets: title is a string
  const n: number = usePaginatedLiveQuery('listTickets', { board: 1 }).results[0]!.title;
  return n;
}
