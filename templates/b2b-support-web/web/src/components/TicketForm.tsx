import { type FormEvent, useState } from 'react';
import { type TicketPriority, useCommand } from '../lib/fw.ts';

const priorities: TicketPriority[] = ['low', 'normal', 'high', 'urgent'];
/** No priority sent: the AI triage (src/actions/triageTicket.ts) picks one after the ticket is created. */
const TRIAGE = '';

/** Opens a ticket; the live list shows it as soon as the command commits. */
export function TicketForm() {
  const createTicket = useCommand('createTicket');
  const [subject, setSubject] = useState('');
  const [body, setBody] = useState('');
  const [priority, setPriority] = useState<TicketPriority | typeof TRIAGE>(TRIAGE);

  async function openTicket(event: FormEvent) {
    event.preventDefault();
    await createTicket.mutateAsync({ subject, body, ...(priority === TRIAGE ? {} : { priority }) }).then(
      () => {
        setSubject('');
        setBody('');
        setPriority(TRIAGE);
      },
      () => undefined, // shown from createTicket.error
    );
  }

  return (
    <form onSubmit={openTicket} aria-label="New ticket" className="stack">
      <label>
        Subject
        <input value={subject} onChange={(e) => setSubject(e.target.value)} maxLength={200} required />
      </label>
      <label>
        Description
        <textarea value={body} onChange={(e) => setBody(e.target.value)} maxLength={10_000} rows={3} />
      </label>
      <div className="row">
        <label>
          Priority
          <select value={priority} onChange={(e) => setPriority(e.target.value as TicketPriority | typeof TRIAGE)}>
            <option value={TRIAGE}>let triage decide</option>
            {priorities.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={createTicket.isPending}>
          Open ticket
        </button>
      </div>
      {createTicket.error && (
        <p role="alert" className="error">
          {createTicket.error.message}
        </p>
      )}
    </form>
  );
}
