import type { UsePaginatedLiveQueryResult } from 'fwjs/react';
import { type Ticket, type TicketPriority, useQuery } from '../lib/fw.ts';
import { Ago, PriorityBadge, SlaBadge, StatusBadge } from './Badges.tsx';
import { ErrorBanner } from './ErrorBanner.tsx';

export type View = 'active' | 'closed';

/** What the list is narrowed to: words in the subject or description, a status (of the active ones), a priority. */
export interface Filters {
  search: string;
  status: '' | 'open' | 'pending';
  priority: '' | TicketPriority;
}
const priorities: TicketPriority[] = ['urgent', 'high', 'normal', 'low'];

interface TicketListProps {
  view: View;
  onView(view: View): void;
  filters: Filters;
  onFilters(filters: Filters): void;
  /** The paginated live list (App owns it: the header shows its live status). */
  tickets: UsePaginatedLiveQueryResult<Ticket>;
  selectedId: string | null;
  onSelect(ticketId: string): void;
  onNew(): void;
}

/** Active or closed tickets, newest first, ten at a time, every loaded page live. */
export function TicketList({ view, onView, filters, onFilters, tickets, selectedId, onSelect, onNew }: TicketListProps) {
  const filtered = filters.search.trim() !== '' || (view === 'active' && filters.status !== '') || filters.priority !== '';
  return (
    <section className="pane list-pane" aria-labelledby="tickets-heading">
      <div className="list-head">
        <h1 id="tickets-heading">Tickets</h1>
        <div className="tabs" role="group" aria-label="Show">
          {(['active', 'closed'] as const).map((name) => (
            <button key={name} type="button" className="tab" aria-pressed={view === name} onClick={() => onView(name)}>
              {name === 'active' ? 'Active' : 'Closed'}
            </button>
          ))}
        </div>
      </div>
      <div className="filters" role="search" aria-label="Find tickets">
        <label className="field">
          <span className="visually-hidden">Search tickets</span>
          <input type="search" value={filters.search} onChange={(e) => onFilters({ ...filters, search: e.target.value })} placeholder="Search subject or description" maxLength={200} />
        </label>
        {view === 'active' && (
          <label className="field inline">
            <span className="visually-hidden">Status</span>
            <select value={filters.status} onChange={(e) => onFilters({ ...filters, status: e.target.value as Filters['status'] })}>
              <option value="">Any status</option>
              <option value="open">Open</option>
              <option value="pending">Awaiting customer</option>
            </select>
          </label>
        )}
        <label className="field inline">
          <span className="visually-hidden">Priority</span>
          <select value={filters.priority} onChange={(e) => onFilters({ ...filters, priority: e.target.value as Filters['priority'] })}>
            <option value="">Any priority</option>
            {priorities.map((p) => (
              <option key={p} value={p}>
                {p.charAt(0).toUpperCase() + p.slice(1)}
              </option>
            ))}
          </select>
        </label>
      </div>
      {/* The subscription ended (e.g. the sign-in expired): Retry reopens it. */}
      {tickets.error && <ErrorBanner title="Could not load tickets" error={tickets.error} onRetry={tickets.liveStatus === 'closed' ? tickets.retry : undefined} />}
      {tickets.isLoading && !tickets.error && <LoadingRows />}
      {!tickets.isLoading && tickets.results.length === 0 && filtered && (
        <div className="empty">
          <p className="empty-title">No tickets match</p>
          <p className="muted">Nothing {view === 'active' ? 'active' : 'closed'} matches these filters.</p>
          <button type="button" className="button" onClick={() => onFilters({ search: '', status: '', priority: '' })}>
            Clear filters
          </button>
        </div>
      )}
      {!tickets.isLoading && tickets.results.length === 0 && !filtered && (
        <div className="empty">
          <p className="empty-title">{view === 'active' ? 'No open tickets' : 'No closed tickets yet'}</p>
          <p className="muted">{view === 'active' ? 'New tickets show up here the moment anyone opens one.' : 'Closed tickets are kept here.'}</p>
          {view === 'active' && (
            <button type="button" className="button" onClick={onNew}>
              Open the first ticket
            </button>
          )}
        </div>
      )}
      {tickets.results.length > 0 && (
        <ul className="ticket-list" aria-label={view === 'active' ? 'Active tickets' : 'Closed tickets'}>
          {tickets.results.map((ticket) => (
            <li key={ticket.id}>
              <button type="button" className="ticket-item" aria-current={ticket.id === selectedId} onClick={() => onSelect(ticket.id)}>
                <span className="ticket-subject">{ticket.subject}</span>
                <span className="ticket-meta">
                  <StatusBadge status={ticket.status} />
                  <PriorityBadge ticket={ticket} />
                  {ticket.sla_breached_at && ticket.status !== 'closed' && <SlaBadge />}
                  <span className="muted">
                    <Ago iso={ticket.created_at} />
                    {ticket.assignee && ` · ${ticket.assignee}`}
                  </span>
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {(tickets.status === 'canLoadMore' || tickets.status === 'loadingMore') && (
        <button type="button" className="button load-more" onClick={() => tickets.loadMore()} disabled={tickets.status === 'loadingMore'}>
          {tickets.status === 'loadingMore' ? 'Loading…' : 'Load more'}
        </button>
      )}
      <Digest />
    </section>
  );
}

function LoadingRows() {
  return (
    <ul className="ticket-list" aria-label="Loading tickets" aria-busy="true">
      {[0, 1, 2].map((n) => (
        <li key={n} className="skeleton" />
      ))}
    </ul>
  );
}

/** The last nightly digest (src/crons.ts), when there is one. */
function Digest() {
  const digest = useQuery('latestDigest', {});
  if (!digest.data) return null;
  const { open_count, pending_count, breached_count } = digest.data;
  return (
    <p className="digest muted">
      Last nightly digest: {open_count} open · {pending_count} awaiting customer · {breached_count} past SLA
    </p>
  );
}
