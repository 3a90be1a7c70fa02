import { useState } from 'react';
import { type TicketStatus, useQuery } from '../lib/fw.ts';

const statuses: TicketStatus[] = ['open', 'pending', 'closed'];

/**
 * Every ticket, filtered by status: a one-shot query, refetched when a command that writes tickets
 * succeeds in this tab (the capability map says which commands do).
 */
export function TicketsByStatus() {
  const [status, setStatus] = useState<TicketStatus | ''>('');
  const tickets = useQuery('listTickets', status === '' ? {} : { status });

  return (
    <section aria-labelledby="all-tickets-heading">
      <h2 id="all-tickets-heading">All tickets</h2>
      <label>
        Filter by status
        <select value={status} onChange={(e) => setStatus(e.target.value as TicketStatus | '')}>
          <option value="">any</option>
          {statuses.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      {tickets.error && <p role="alert">Could not load tickets: {tickets.error.message}</p>}
      {tickets.isLoading && <p>Loading…</p>}
      <ul aria-label="Tickets by status" className="tickets">
        {tickets.data?.map((ticket) => (
          <li key={ticket.id}>
            {ticket.subject} <span className="badge">{ticket.status}</span>
          </li>
        ))}
      </ul>
      {tickets.data?.length === 0 && <p>No tickets{status ? ` with status ${status}` : ''}.</p>}
    </section>
  );
}
