import { type FormEvent, useEffect, useRef, useState } from 'react';
import type { FwError, UsePaginatedLiveQueryResult } from 'fwjs/react';
import type { ResultOf } from 'fwjs/client';
import { type api, useCommand } from '../lib/fw.ts';
import { ErrorBanner, isRetryable } from './ErrorBanner.tsx';

/** A row of findNotes, typed from the schema: a column added there is here too. */
export type Note = ResultOf<typeof api.liveQueries.findNotes>['page'][number];
/** findNotes' args without the page: what the loaded pages are, for an optimistic change of them. */
export type NoteArgs = { search?: string };

const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

interface NoteListProps {
  /** The paginated live list (App owns it: the header shows its live status). */
  notes: UsePaginatedLiveQueryResult<Note>;
  /** The args the pages were read with (the search as sent). */
  args: NoteArgs;
  /** The search box's text (sent once typing pauses). */
  search: string;
  onSearch(search: string): void;
}

/**
 * The notes, newest first, twenty at a time, every loaded page live; found by words in the title or
 * details. A skeleton before the first page, an empty state (or "nothing matches"), the error that ended
 * the subscription; your own notes can be edited in place and deleted (after a confirmation).
 */
export function NoteList({ notes, args, search, onSearch }: NoteListProps) {
  const { results, error } = notes;
  const [announcement, setAnnouncement] = useState('');
  const listRef = useRef<HTMLUListElement>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  // After "Show more": the cursor goes to the first note loaded (the button may be gone).
  const [focusFrom, setFocusFrom] = useState<number | null>(null);
  useEffect(() => {
    if (focusFrom === null || results.length <= focusFrom) return;
    listRef.current?.querySelectorAll<HTMLElement>(':scope > li')[focusFrom]?.focus();
    setFocusFrom(null);
  }, [focusFrom, results.length]);

  // Deleted at once (optimistic), back in its place if the server refuses.
  const deleteNote = useCommand('deleteNote', {
    optimistic: (store, { id }) => store.setPages('findNotes', args, (rows) => rows.filter((note) => note.id !== id)),
  });
  async function remove(note: Note, index: number) {
    // The cursor goes to the next note (the previous one at the end, the heading when none is left).
    const items = [...(listRef.current?.querySelectorAll<HTMLElement>(':scope > li') ?? [])];
    (items[index + 1] ?? items[index - 1] ?? headingRef.current)?.focus();
    setAnnouncement(`Deleted “${note.title}”.`);
    await deleteNote.mutateAsync({ id: note.id }).catch(() => setAnnouncement(''));
  }

  const searching = args.search !== undefined;
  const count = results.length > 0 ? `${results.length}${notes.isDone ? '' : '+'}` : '';
  return (
    <section aria-labelledby="notes-heading">
      <div className="notes-head">
        <h2 id="notes-heading" ref={headingRef} tabIndex={-1} className="notes-heading">
          {searching ? 'Matching notes' : 'Your notes'} {count && <span className="count">{count}</span>}
        </h2>
        <form role="search" className="search" onSubmit={(e) => e.preventDefault()}>
          <input
            type="search"
            aria-label="Search notes"
            placeholder="Search notes"
            value={search}
            maxLength={200}
            onChange={(e) => onSearch(e.target.value)}
            onKeyDown={(e) => e.key === 'Escape' && search && (e.preventDefault(), onSearch(''))}
          />
        </form>
      </div>
      <p className="visually-hidden" aria-live="polite">
        {announcement}
      </p>
      {deleteNote.error && <ErrorBanner title="The note was not deleted" error={deleteNote.error} onDismiss={deleteNote.reset} />}
      {error && notes.liveStatus === 'closed' ? (
        // The subscription ended (e.g. sign-in expired): Reconnect (Retry, for a failure) reopens it (the hook's retry).
        <ErrorBanner title="Could not load notes" error={error} onRetry={notes.retry} retryLabel={error.status === 401 || error.status === 403 ? 'Reconnect' : undefined} />
      ) : notes.isLoading ? (
        <div className="notes" aria-busy="true">
          <span className="visually-hidden">Loading…</span>
          <div className="skeleton" />
          <div className="skeleton" />
        </div>
      ) : results.length === 0 && searching ? (
        <div className="empty">
          <strong>No notes match “{args.search}”.</strong>
          <p>Search looks in titles and details, whatever the case.</p>
          <button type="button" className="secondary" onClick={() => onSearch('')}>
            Clear search
          </button>
        </div>
      ) : results.length === 0 ? (
        <div className="empty">
          <strong>No notes yet.</strong>
          <p>Add your first one above — it appears here, and in every other open tab, at once.</p>
        </div>
      ) : (
        <ul ref={listRef} className="notes" aria-label="Notes">
          {results.map((note, index) => (
            <NoteItem key={note.id} note={note} args={args} onDelete={() => void remove(note, index)} />
          ))}
        </ul>
      )}
      {(notes.status === 'canLoadMore' || notes.status === 'loadingMore') && (
        <button
          type="button"
          className="secondary load-more"
          disabled={notes.status === 'loadingMore'}
          onClick={() => {
            setFocusFrom(results.length);
            notes.loadMore();
          }}
        >
          {notes.status === 'loadingMore' ? 'Loading…' : 'Show more notes'}
        </button>
      )}
    </section>
  );
}

/** One note: read, edited in place (Enter saves, Escape cancels) or about to be deleted (asks first). */
function NoteItem({ note, args, onDelete }: { note: Note; args: NoteArgs; onDelete(): void }) {
  const pending = note.id.startsWith('pending-');
  const [mode, setMode] = useState<'read' | 'edit' | 'confirm'>('read');
  const [title, setTitle] = useState(note.title);
  const [body, setBody] = useState(note.body ?? '');
  const editButton = useRef<HTMLButtonElement>(null);
  const keepButton = useRef<HTMLButtonElement>(null);
  const titleInput = useRef<HTMLInputElement>(null);
  const form = useRef<HTMLFormElement>(null);
  // Where the cursor goes once the mode has changed.
  const [focus, setFocus] = useState<'edit' | 'title' | 'keep' | null>(null);
  useEffect(() => {
    if (focus === 'edit') editButton.current?.focus();
    if (focus === 'title') titleInput.current?.focus();
    if (focus === 'keep') keepButton.current?.focus();
    setFocus(null);
  }, [focus]);

  // Optimistic: the new text shows at once, marked "Saving…"; the old comes back if the server refuses.
  const updateNote = useCommand('updateNote', {
    optimistic: (store, change) => {
      if (!change.title.trim()) return;
      store.setPages('findNotes', args, (rows) =>
        rows.map((row) => (row.id === change.id ? { ...row, title: change.title.trim(), body: change.body?.trim() ? change.body : null, saving: true } : row)),
      );
    },
  });
  const error = updateNote.error;
  const fieldProblems = error?.code === 'validation_failed' ? error.diagnostics.filter((d) => d.path === 'args.title' || d.path === 'args.body') : [];
  const onlyFields = fieldProblems.length > 0 && fieldProblems.length === error?.diagnostics.length;
  const titleProblem = fieldProblems.find((d) => d.path === 'args.title');
  const bodyProblem = fieldProblems.find((d) => d.path === 'args.body');
  const problemId = (field: string) => `${field}-problem-${note.id}`;

  function startEditing() {
    setTitle(note.title);
    setBody(note.body ?? '');
    updateNote.reset();
    setMode('edit');
    setFocus('title');
  }
  function cancel() {
    updateNote.reset();
    setMode('read');
    setFocus('edit');
  }
  async function save(event: FormEvent) {
    event.preventDefault();
    const change = { id: note.id, title, body };
    // Shown at once (optimistic) unless the title is blank, which the server refuses: then the form stays.
    if (title.trim()) {
      setMode('read');
      setFocus('edit');
    }
    await updateNote.mutateAsync(change).catch((refusal: FwError) => {
      // Refused: the form comes back with the text as typed, the cursor where the fix is.
      setTitle(change.title);
      setBody(change.body);
      setMode('edit');
      setFocus(refusal.code === 'validation_failed' && refusal.diagnostics.some((d) => d.path === 'args.body') && !refusal.diagnostics.some((d) => d.path === 'args.title') ? null : 'title');
    });
  }

  const saving = pending || (note as Note & { saving?: boolean }).saving === true;
  if (mode === 'edit') {
    return (
      <li className="card note editing" tabIndex={-1}>
        <form ref={form} className="note-form" onSubmit={save} aria-label={`Edit note ${note.title}`} onKeyDown={(e) => e.key === 'Escape' && (e.preventDefault(), cancel())}>
          <label className="field">
            Title
            <input
              ref={titleInput}
              value={title}
              onChange={(e) => {
                setTitle(e.target.value);
                if (onlyFields) updateNote.reset();
              }}
              maxLength={200}
              required
              aria-invalid={titleProblem ? true : undefined}
              aria-describedby={titleProblem ? problemId('title') : undefined}
            />
          </label>
          {titleProblem && (
            <p id={problemId('title')} className="field-problem" role="alert">
              {titleProblem.code === 'too_small' ? 'Title can’t be blank.' : titleProblem.message}
            </p>
          )}
          <label className="field">
            <span>
              Details <small>(optional)</small>
            </span>
            <textarea
              value={body}
              onChange={(e) => setBody(e.target.value)}
              onKeyDown={(e) => e.key === 'Enter' && (e.metaKey || e.ctrlKey) && e.currentTarget.form?.requestSubmit()}
              maxLength={10_000}
              rows={3}
              aria-invalid={bodyProblem ? true : undefined}
              aria-describedby={bodyProblem ? problemId('body') : undefined}
            />
          </label>
          {bodyProblem && (
            <p id={problemId('body')} className="field-problem" role="alert">
              {bodyProblem.message}
            </p>
          )}
          {error && !onlyFields && (
            <ErrorBanner title="The note was not saved" error={error} onRetry={isRetryable(error) ? () => form.current?.requestSubmit() : undefined} onDismiss={updateNote.reset} />
          )}
          <div className="note-actions">
            <button type="button" className="secondary" onClick={cancel}>
              Cancel
            </button>
            <button type="submit">Save</button>
          </div>
        </form>
      </li>
    );
  }
  return (
    <li className={saving ? 'card note pending' : 'card note'} tabIndex={-1}>
      <h3>{note.title}</h3>
      {note.body && <p>{note.body}</p>}
      <div className="note-foot">
        {saving ? <span className="saving">Saving…</span> : <time dateTime={note.created_at}>{when.format(new Date(note.created_at))}</time>}
        {note.mine && !pending && mode === 'read' && (
          <div className="note-actions">
            <button ref={editButton} type="button" className="secondary small" aria-label={`Edit ${note.title}`} onClick={startEditing}>
              Edit
            </button>
            <button
              type="button"
              className="secondary small danger"
              aria-label={`Delete ${note.title}`}
              onClick={() => {
                setMode('confirm');
                setFocus('keep');
              }}
            >
              Delete
            </button>
          </div>
        )}
      </div>
      {mode === 'confirm' && (
        <div
          className="confirm"
          role="group"
          aria-label={`Delete ${note.title}?`}
          onKeyDown={(e) => {
            if (e.key !== 'Escape') return;
            e.preventDefault();
            setMode('read');
            setFocus('edit');
          }}
        >
          <span>Delete this note? This can’t be undone.</span>
          <div className="note-actions">
            <button
              ref={keepButton}
              type="button"
              className="secondary small"
              onClick={() => {
                setMode('read');
                setFocus('edit');
              }}
            >
              Keep
            </button>
            <button type="button" className="small destructive" onClick={onDelete}>
              Delete note
            </button>
          </div>
        </div>
      )}
    </li>
  );
}
