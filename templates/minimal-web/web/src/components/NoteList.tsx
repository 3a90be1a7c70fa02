import type { FwError } from 'fwjs/react';
import type { ResultOf } from 'fwjs/client';
import type { api } from '../lib/fw.ts';
import { ErrorBanner } from './ErrorBanner.tsx';

/** A row of liveNotes, typed from the schema: a column added there is here too. */
type Note = ResultOf<typeof api.liveQueries.liveNotes>[number];

const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** The notes, newest first; a skeleton before the first snapshot, an empty state, or the error that ended the subscription. */
export function NoteList({ notes, error, onRetry }: { notes: Note[] | undefined; error: FwError | undefined; onRetry: () => void }) {
  return (
    <section aria-labelledby="notes-heading">
      <h2 id="notes-heading" className="notes-heading">
        Your notes {notes && notes.length > 0 && <span className="count">{notes.length}</span>}
      </h2>
      {error ? (
        // The subscription ended (e.g. sign-in expired): Reconnect (Retry, for a failure) reopens it (useLiveQuery's retry).
        <ErrorBanner title="Could not load notes" error={error} onRetry={onRetry} retryLabel={error.status === 401 || error.status === 403 ? 'Reconnect' : undefined} />
      ) : notes === undefined ? (
        <div className="notes" aria-busy="true">
          <span className="visually-hidden">Loading…</span>
          <div className="skeleton" />
          <div className="skeleton" />
        </div>
      ) : notes.length === 0 ? (
        <div className="empty">
          <strong>No notes yet.</strong>
          <p>Add your first one above — it appears here, and in every other open tab, at once.</p>
        </div>
      ) : (
        <ul className="notes" aria-label="Notes">
          {notes.map((note) => {
            const pending = note.id.startsWith('pending-');
            return (
              <li key={note.id} className={pending ? 'card note pending' : 'card note'}>
                <h3>{note.title}</h3>
                {note.body && <p>{note.body}</p>}
                {pending ? <span className="saving">Saving…</span> : <time dateTime={note.created_at}>{when.format(new Date(note.created_at))}</time>}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
