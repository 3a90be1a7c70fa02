import { type FormEvent, useState } from 'react';
import { type TicketPriority, useCommand } from '../lib/fw.ts';
import { ErrorBanner } from './ErrorBanner.tsx';

const priorities: TicketPriority[] = ['low', 'normal', 'high', 'urgent'];
/** No priority sent: the AI triage (src/actions/triageTicket.ts) picks one after the ticket is created. */
const TRIAGE = '';

/** Opens a ticket; the live list shows it as soon as the command commits. */
export function TicketForm({ onCreated }: { onCreated(ticketId: string): void }) {
  const createTicket = useCommand('createTicket');
  const [subject, setSubject] = useState('');
  const [body, setBody] = useState('');
  const [priority, setPriority] = useState<TicketPriority | typeof TRIAGE>(TRIAGE);

  async function openTicket(event: FormEvent) {
    event.preventDefault();
    await createTicket.mutateAsync({ subject, body, ...(priority === TRIAGE ? {} : { priority }) }).then(
      (ticket) => onCreated(ticket.id),
      () => undefined, // shown from createTicket.error
    );
  }

  return (
    <form onSubmit={openTicket} aria-labelledby="new-ticket-heading" className="card form">
      <h2 id="new-ticket-heading">New ticket</h2>
      <label className="field">
        <span>Subject</span>
        <input value={subject} onChange={(e) => setSubject(e.target.value)} maxLength={200} required autoFocus placeholder="What is the customer asking about?" />
      </label>
      <label className="field">
        <span>Description</span>
        <textarea value={body} onChange={(e) => setBody(e.target.value)} maxLength={10_000} rows={5} placeholder="Details, steps, order numbers…" />
      </label>
      <label className="field">
        <span>Priority</span>
        <select value={priority} onChange={(e) => setPriority(e.target.value as TicketPriority | typeof TRIAGE)}>
          <option value={TRIAGE}>Let the AI triage decide</option>
          {priorities.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
      {createTicket.error && <ErrorBanner error={createTicket.error} onDismiss={createTicket.reset} />}
      <div className="actions spread">
        <p className="hint muted">Unanswered tickets are escalated after 4 hours.</p>
        <button type="submit" className="button primary" disabled={createTicket.isPending}>
          {createTicket.isPending ? 'Opening…' : 'Open ticket'}
        </button>
      </div>
    </form>
  );
}
