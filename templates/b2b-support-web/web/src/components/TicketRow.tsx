import { type FormEvent, useState } from 'react';
import { type Ticket, useCommand } from '../lib/fw.ts';

/** One open or pending ticket with its actions: assign (admins only, enforced by the server) and close. */
export function TicketRow({ ticket }: { ticket: Ticket }) {
  const closeTicket = useCommand('closeTicket');
  const assignTicket = useCommand('assignTicket');
  const [assignee, setAssignee] = useState('');
  const error = closeTicket.error ?? assignTicket.error;

  async function assign(event: FormEvent) {
    event.preventDefault();
    await assignTicket.mutateAsync({ ticketId: ticket.id, assignee }).then(() => setAssignee(''), () => undefined);
  }

  return (
    <li className="ticket">
      <div className="row">
        <strong>{ticket.subject}</strong>
        <span className={`badge priority-${ticket.priority}`} title={`priority set by ${ticket.priority_source}`}>
          {ticket.priority}
          {ticket.priority_source === 'triage' ? ' (triage)' : ''}
        </span>
        <span className="badge">{ticket.status}</span>
      </div>
      {ticket.body && <p className="muted">{ticket.body}</p>}
      {ticket.triage_summary && <p className="muted">Triage: {ticket.triage_summary}</p>}
      <p className="muted">
        Opened by {ticket.created_by} · {ticket.assignee ? `assigned to ${ticket.assignee}` : 'unassigned'}
      </p>
      <div className="row">
        <form onSubmit={assign} className="row">
          <label>
            Assign to
            <input value={assignee} onChange={(e) => setAssignee(e.target.value)} maxLength={200} required />
          </label>
          <button type="submit" disabled={assignTicket.isPending} aria-label={`Assign “${ticket.subject}”`}>
            Assign
          </button>
        </form>
        <button
          type="button"
          onClick={() => closeTicket.mutate({ ticketId: ticket.id })}
          disabled={closeTicket.isPending}
          aria-label={`Close “${ticket.subject}”`}
        >
          Close
        </button>
      </div>
      {error && (
        <p role="alert" className="error">
          {error.message}
        </p>
      )}
    </li>
  );
}
