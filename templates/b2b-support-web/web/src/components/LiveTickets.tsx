import { useLiveQuery } from '../lib/fw.ts';
import { TicketRow } from './TicketRow.tsx';

/** Open and pending tickets, pushed by the runtime whenever a ticket of this tenant changes. */
export function LiveTickets() {
  const tickets = useLiveQuery('liveTickets', {});

  return (
    <section aria-labelledby="live-tickets-heading">
      <h2 id="live-tickets-heading">
        Open tickets {tickets.status === 'reconnecting' && <small className="muted">(reconnecting…)</small>}
      </h2>
      {tickets.error && <p role="alert">Could not load tickets: {tickets.error.message}</p>}
      {tickets.data === undefined && !tickets.error && <p>Loading…</p>}
      <ul aria-label="Open tickets" className="tickets">
        {tickets.data?.map((ticket) => (
          <TicketRow key={ticket.id} ticket={ticket} />
        ))}
      </ul>
      {tickets.data?.length === 0 && <p>No open tickets.</p>}
    </section>
  );
}
