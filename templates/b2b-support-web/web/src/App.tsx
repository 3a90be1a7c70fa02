import { type ReactNode, useEffect, useState } from 'react';
import { AddPersonForm } from './components/AddPersonForm.tsx';
import { LiveIndicator } from './components/LiveIndicator.tsx';
import { TicketDetail } from './components/TicketDetail.tsx';
import { TicketForm } from './components/TicketForm.tsx';
import { type Filters, TicketList, type View } from './components/TicketList.tsx';
import { usePaginatedLiveQuery } from './lib/fw.ts';
import { Brand } from './components/Brand.tsx';

/** What the right-hand pane shows: a ticket, the new-ticket form, the add-a-person form (admins), or nothing yet. */
type Selection = { ticketId: string } | 'new' | 'people' | null;

/**
 * The desk: a header (brand, who you are, whether the list is live), the ticket list and the selected
 * ticket. On a narrow screen the list and the detail take turns (`data-pane`).
 */
export function App({ identity, role }: { identity?: ReactNode; role?: string | null }) {
  const [view, setView] = useState<View>('active');
  const [filters, setFilters] = useState<Filters>({ search: '', status: '', priority: '' });
  // The search asks the server once typing pauses, not at every key.
  const [search, setSearch] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setSearch(filters.search.trim()), 250);
    return () => clearTimeout(timer);
  }, [filters.search]);
  const [selection, setSelection] = useState<Selection>(null);
  // Every loaded page stays live: a ticket opened anywhere in this tenant appears at the top (if it matches).
  const tickets = usePaginatedLiveQuery(
    'liveTickets',
    { view, ...(search ? { search } : {}), ...(view === 'active' && filters.status ? { status: filters.status } : {}), ...(filters.priority ? { priority: filters.priority } : {}) },
    { pageSize: 10 },
  );
  const selectedId = typeof selection === 'object' && selection !== null ? selection.ticketId : null;

  return (
    <div className="app" data-pane={selection === null ? 'list' : 'detail'}>
      <header className="topbar">
        <Brand />
        <div className="topbar-status">
          <LiveIndicator status={tickets.liveStatus} />
          {identity}
          {role === 'admin' && (
            <button type="button" className="button ghost small" onClick={() => setSelection('people')}>
              Add person
            </button>
          )}
        </div>
        <button type="button" className="button primary new-ticket" onClick={() => setSelection('new')}>
          New ticket
        </button>
      </header>
      <main className="layout">
        <TicketList
          view={view}
          onView={(next) => {
            setView(next);
            setSelection(null);
          }}
          filters={filters}
          onFilters={setFilters}
          tickets={tickets}
          selectedId={selectedId}
          onSelect={(ticketId) => setSelection({ ticketId })}
          onNew={() => setSelection('new')}
        />
        <section className="pane detail-pane" aria-label={selection === 'new' ? 'New ticket' : selection === 'people' ? 'People' : 'Ticket'}>
          {selection !== null && (
            <button type="button" className="button ghost back" onClick={() => setSelection(null)}>
              ← All tickets
            </button>
          )}
          {selection === 'new' && <TicketForm onCreated={(ticketId) => setSelection({ ticketId })} />}
          {selection === 'people' && <AddPersonForm />}
          {/* Opened from the list or the form: the keyboard's focus moves to it (its heading). */}
          {selectedId && <TicketDetail key={selectedId} ticketId={selectedId} canAssign={role === 'admin'} focusOnOpen />}
          {selection === null && (
            <div className="placeholder">
              <svg aria-hidden="true" viewBox="0 0 24 24" className="placeholder-icon">
                <path d="M4 5h16v10H9l-5 4z" />
              </svg>
              <p>Select a ticket to read and answer it.</p>
            </div>
          )}
        </section>
      </main>
    </div>
  );
}
