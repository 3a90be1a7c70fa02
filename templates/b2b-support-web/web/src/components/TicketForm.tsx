import { type FormEvent, useRef, useState } from 'react';
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
  const subjectInput = useRef<HTMLInputElement>(null);
  const bodyInput = useRef<HTMLTextAreaElement>(null);
  // A refusal about the form's own fields is said under them, in words; anything else gets the banner.
  const error = createTicket.error;
  const fieldProblems = error?.code === 'validation_failed' ? error.diagnostics.filter((d) => d.path === 'args.subject' || d.path === 'args.body') : [];
  const onlyFields = fieldProblems.length > 0 && fieldProblems.length === error?.diagnostics.length;
  const subjectProblem = fieldProblems.find((d) => d.path === 'args.subject');
  const bodyProblem = fieldProblems.find((d) => d.path === 'args.body');

  async function openTicket(event: FormEvent) {
    event.preventDefault();
    await createTicket.mutateAsync({ subject, body, ...(priority === TRIAGE ? {} : { priority }) }).then(
      (ticket) => onCreated(ticket.id),
      (refusal: { code?: string; diagnostics?: Array<{ path: string }> }) => {
        // Refused for a field: the cursor goes where the fix is (the rest is shown from createTicket.error).
        const paths = refusal.code === 'validation_failed' ? (refusal.diagnostics ?? []).map((d) => d.path) : [];
        if (paths.includes('args.subject')) subjectInput.current?.focus();
        else if (paths.includes('args.body')) bodyInput.current?.focus();
      },
    );
  }
  /** Being fixed: the words under the field go. */
  const editing = () => {
    if (onlyFields) createTicket.reset();
  };

  return (
    <form onSubmit={openTicket} aria-labelledby="new-ticket-heading" className="card form">
      <h2 id="new-ticket-heading">New ticket</h2>
      <label className="field">
        <span>Subject</span>
        <input
          ref={subjectInput}
          value={subject}
          onChange={(e) => {
            setSubject(e.target.value);
            editing();
          }}
          maxLength={200}
          required
          autoFocus
          placeholder="What is the customer asking about?"
          aria-invalid={subjectProblem ? true : undefined}
          aria-describedby={subjectProblem ? 'subject-problem' : undefined}
        />
      </label>
      {subjectProblem && (
        <p id="subject-problem" className="field-problem" role="alert">
          {subjectProblem.code === 'too_small' ? 'Subject can’t be blank.' : subjectProblem.code === 'too_big' ? 'Subject is too long: 200 characters at most.' : subjectProblem.message}
        </p>
      )}
      <label className="field">
        <span>Description</span>
        <textarea
          ref={bodyInput}
          value={body}
          onChange={(e) => {
            setBody(e.target.value);
            editing();
          }}
          maxLength={10_000}
          rows={5}
          placeholder="Details, steps, order numbers…"
          aria-invalid={bodyProblem ? true : undefined}
          aria-describedby={bodyProblem ? 'body-problem' : undefined}
        />
      </label>
      {bodyProblem && (
        <p id="body-problem" className="field-problem" role="alert">
          {bodyProblem.code === 'too_big' ? 'Description is too long: 10,000 characters at most.' : bodyProblem.message}
        </p>
      )}
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
      {error && !onlyFields && <ErrorBanner error={error} onDismiss={createTicket.reset} />}
      <div className="actions spread">
        <p className="hint muted">Unanswered tickets are escalated after 4 hours.</p>
        <button type="submit" className="button primary" disabled={createTicket.isPending}>
          {createTicket.isPending ? 'Opening…' : 'Open ticket'}
        </button>
      </div>
    </form>
  );
}
