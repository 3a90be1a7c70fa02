import { type FormEvent, useEffect, useRef, useState } from 'react';
import type { FwError } from 'fwjs/react';
import { ErrorBanner, isRetryable } from './components/ErrorBanner.tsx';
import { LiveBadge } from './components/LiveBadge.tsx';
import { type NoteArgs, NoteList } from './components/NoteList.tsx';
import { useCommand, usePaginatedLiveQuery } from './lib/fw.ts';
import './styles.css';

let pendingNotes = 0;
/** The key that goes with Enter in the hint: ⌘ on Apple devices. */
const mod = /Mac|iP(hone|ad|od)/.test(navigator.platform) ? '⌘' : 'Ctrl';

export function App() {
  // The search asks the server once typing pauses, not at every key.
  const [searchText, setSearchText] = useState('');
  const [search, setSearch] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setSearch(searchText.trim()), 250);
    return () => clearTimeout(timer);
  }, [searchText]);
  const args: NoteArgs = search ? { search } : {};
  // Live, twenty at a time: a note added, edited or deleted anywhere (another tab, another user of this
  // tenant) shows in its page without a reload; "Show more notes" loads the next page, live too.
  const notes = usePaginatedLiveQuery('findNotes', args, { pageSize: 20 });
  // Optimistic: the note is listed at once, marked pending; the server's row replaces it, or it goes if the command fails.
  const createNote = useCommand('createNote', {
    optimistic: (store, note) => {
      // Not for a blank title, which the server refuses: no note flashes in and out.
      if (!note.title.trim()) return;
      const row = { id: `pending-${++pendingNotes}`, title: note.title, body: note.body ?? null, author_id: '', tenant_id: '', created_at: new Date().toISOString(), mine: true };
      // At the top of the first page (newest first); a search shows it once the server has it, if it matches.
      store.setPages('findNotes', args, (rows, { page }) => (page.cursor === null && !args.search ? [row, ...rows] : rows));
    },
  });
  const [title, setTitle] = useState('');
  const [body, setBody] = useState('');
  const form = useRef<HTMLFormElement>(null);
  const titleInput = useRef<HTMLInputElement>(null);
  // A refusal about the form's own fields is said under them, in words; anything else gets the banner.
  const error = createNote.error;
  const fieldProblems = error?.code === 'validation_failed' ? error.diagnostics.filter((d) => d.path === 'args.title' || d.path === 'args.body') : [];
  const onlyFields = fieldProblems.length > 0 && fieldProblems.length === error?.diagnostics.length;
  const titleProblem = fieldProblems.find((d) => d.path === 'args.title');
  const bodyProblem = fieldProblems.find((d) => d.path === 'args.body');

  async function addNote(event: FormEvent) {
    event.preventDefault();
    const note = body.trim() ? { title, body } : { title };
    // Cleared at once (the note is already in the list); given back to the form if the server refuses it.
    setTitle('');
    setBody('');
    await createNote.mutateAsync(note).catch((refusal: FwError) => {
      setTitle((current) => current || note.title);
      setBody((current) => current || (note.body ?? ''));
      // Refused for its title: the cursor goes where the fix is.
      if (refusal.code === 'validation_failed' && refusal.diagnostics.some((d) => d.path === 'args.title')) titleInput.current?.focus();
    });
  }

  return (
    <main className="app">
      <header className="app-header">
        <div className="brand">
          <img src="/favicon.svg" alt="" />
          <h1>Notes</h1>
        </div>
        <LiveBadge status={notes.liveStatus} />
      </header>

      <form ref={form} className="card composer" onSubmit={addNote} aria-label="New note">
        <label className="field">
          Title
          <input
            ref={titleInput}
            value={title}
            onChange={(e) => {
              setTitle(e.target.value);
              // Being fixed: the note under the field goes.
              if (onlyFields) createNote.reset();
            }}
            maxLength={200}
            placeholder="What’s on your mind?"
            required
            aria-invalid={titleProblem ? true : undefined}
            aria-describedby={titleProblem ? 'title-problem' : undefined}
          />
        </label>
        {titleProblem && (
          <p id="title-problem" className="field-problem" role="alert">
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
            rows={2}
            aria-invalid={bodyProblem ? true : undefined}
            aria-describedby={bodyProblem ? 'body-problem' : undefined}
          />
        </label>
        {bodyProblem && (
          <p id="body-problem" className="field-problem" role="alert">
            {bodyProblem.message}
          </p>
        )}
        <div className="composer-actions">
          <span className="hint">
            <kbd>Enter</kbd> in the title or <kbd>{mod}</kbd>+<kbd>Enter</kbd> adds the note
          </span>
          <button type="submit">Add note</button>
        </div>
      </form>

      {error && !onlyFields && (
        <ErrorBanner
          title="The note was not saved"
          error={error}
          // The text is back in the form: Retry sends it again.
          onRetry={isRetryable(error) ? () => form.current?.requestSubmit() : undefined}
          onDismiss={createNote.reset}
        />
      )}

      <NoteList notes={notes} args={args} search={searchText} onSearch={setSearchText} />
    </main>
  );
}
