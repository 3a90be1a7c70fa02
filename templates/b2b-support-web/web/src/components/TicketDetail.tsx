import { type FormEvent, useEffect, useRef, useState } from 'react';
import { type Comment, useCommand, useLiveQuery } from '../lib/fw.ts';
import { Ago, PriorityBadge, SlaBadge, StatusBadge } from './Badges.tsx';
import { ErrorBanner } from './ErrorBanner.tsx';

let pendingIds = 0;

/** One ticket, live: its details, the conversation, a reply box and the agent's actions. */
export function TicketDetail({ ticketId, canAssign, focusOnOpen = false }: { ticketId: string; canAssign: boolean; focusOnOpen?: boolean }) {
  const live = useLiveQuery('liveTicket', { ticketId });
  // Opened: the keyboard's focus goes to the ticket (its heading, once it has loaded), not left in the list.
  const heading = useRef<HTMLHeadingElement>(null);
  const focused = useRef(false);
  useEffect(() => {
    if (!focusOnOpen || focused.current || !heading.current) return;
    focused.current = true;
    heading.current.focus();
  });
  // The reply shows at once: the optimistic update adds it to the loaded conversation, and it stays until
  // the server's snapshot includes it (or goes if the command fails). docs/live.md "Optimistic updates".
  const addComment = useCommand('addComment', {
    optimistic: (store, args) =>
      store.setLive('liveTicket', { ticketId: args.ticketId }, (current) => ({
        ticket: current.ticket && { ...current.ticket, status: args.from === 'customer' ? ('open' as const) : ('pending' as const) },
        comments: [
          ...current.comments,
          { id: `pending-${++pendingIds}`, ticket_id: args.ticketId, body: args.body.trim(), author: 'you', author_kind: args.from ?? 'agent', created_at: new Date().toISOString(), tenant_id: '' },
        ],
      })),
  });
  const closeTicket = useCommand('closeTicket');
  const assignTicket = useCommand('assignTicket');
  const [reply, setReply] = useState('');
  const [assignee, setAssignee] = useState('');
  const actionError = addComment.error ?? assignTicket.error ?? closeTicket.error;

  if (live.error && !live.data) return <ErrorBanner title="Could not load this ticket" error={live.error} onRetry={live.status === 'closed' ? live.retry : undefined} />;
  if (!live.data) return <p className="muted loading">Loading ticket…</p>;
  const { ticket, comments } = live.data;
  if (!ticket) return <p className="muted">This ticket does not exist in this organisation.</p>;

  function send(from: 'agent' | 'customer') {
    const body = reply;
    if (!body.trim()) return;
    setReply('');
    // Refused (the banner says why): the optimistic reply goes, and its text comes back to the box.
    addComment.mutateAsync({ ticketId, body, from }).catch(() => setReply((current) => current || body));
  }
  function assign(event: FormEvent) {
    event.preventDefault();
    void assignTicket.mutateAsync({ ticketId, assignee }).then(() => setAssignee(''), () => undefined);
  }
  const closed = ticket.status === 'closed';

  return (
    <article className="ticket" aria-labelledby="ticket-subject">
      <header className="ticket-head">
        <h2 id="ticket-subject" ref={heading} tabIndex={-1}>
          {ticket.subject}
        </h2>
        <div className="ticket-meta">
          <StatusBadge status={ticket.status} />
          <PriorityBadge ticket={ticket} />
          {ticket.sla_breached_at && !closed && <SlaBadge />}
          <span className="muted">
            Opened by {ticket.created_by} <Ago iso={ticket.created_at} /> · {ticket.assignee ? `assigned to ${ticket.assignee}` : 'unassigned'}
          </span>
        </div>
      </header>

      {ticket.body && <p className="ticket-body">{ticket.body}</p>}
      {ticket.triage_summary && (
        <p className="triage">
          <span className="triage-label">AI triage</span> {ticket.triage_summary}
        </p>
      )}

      {actionError && (
        <ErrorBanner
          title={addComment.error ? 'The reply was not sent' : assignTicket.error ? 'The ticket was not assigned' : 'The ticket was not closed'}
          error={actionError}
          onDismiss={() => {
            addComment.reset();
            assignTicket.reset();
            closeTicket.reset();
          }}
        />
      )}

      <ol className="conversation" aria-label="Conversation">
        {comments.length === 0 && <li className="muted no-comments">No replies yet.</li>}
        {comments.map((comment) => (
          <CommentItem key={comment.id} comment={comment} />
        ))}
      </ol>

      {!closed && (
        <form
          className="reply"
          aria-label="Reply"
          onSubmit={(e) => {
            e.preventDefault();
            send('agent');
          }}
        >
          <label className="field">
            <span className="visually-hidden">Reply</span>
            <textarea
              value={reply}
              onChange={(e) => setReply(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) send('agent');
              }}
              rows={3}
              maxLength={10_000}
              placeholder="Write a reply to the customer… (Ctrl+Enter sends)"
            />
          </label>
          <div className="actions">
            <button type="button" className="button ghost" onClick={() => send('customer')} disabled={!reply.trim()}>
              Log customer answer
            </button>
            <button type="submit" className="button primary" disabled={!reply.trim()}>
              Send reply
            </button>
          </div>
        </form>
      )}

      <footer className="ticket-actions">
        {/* Only admins may assign (src/policies.ts): agents are not offered what the server would refuse. */}
        {canAssign ? (
          <form onSubmit={assign} className="assign">
            <label className="field inline">
              <span>Assign to</span>
              <input value={assignee} onChange={(e) => setAssignee(e.target.value)} maxLength={200} required placeholder="name" />
            </label>
            <button type="submit" className="button" disabled={assignTicket.isPending}>
              Assign
            </button>
          </form>
        ) : (
          <p className="muted hint">Only admins assign tickets.</p>
        )}
        {!closed && (
          <button type="button" className="button danger" onClick={() => closeTicket.mutate({ ticketId })} disabled={closeTicket.isPending}>
            Close ticket
          </button>
        )}
      </footer>
    </article>
  );
}

const authorLabels: Record<Comment['author_kind'], string> = { agent: 'Support', customer: 'Customer', system: 'Desk' };

function CommentItem({ comment }: { comment: Comment }) {
  const pending = comment.id.startsWith('pending-');
  return (
    <li className={`comment from-${comment.author_kind}`} data-pending={pending || undefined}>
      <div className="comment-head">
        <strong>{comment.author_kind === 'agent' ? comment.author : authorLabels[comment.author_kind]}</strong>
        <span className="muted">{pending ? 'Sending…' : <Ago iso={comment.created_at} />}</span>
      </div>
      <p>{comment.body}</p>
    </li>
  );
}
