import { type FormEvent, useState } from 'react';
import { useCommand, useLiveQuery } from './lib/fw.ts';

export function App() {
  // Live: a note added anywhere (another tab, another user of this tenant) appears without a reload.
  const notes = useLiveQuery('liveNotes', {});
  const createNote = useCommand('createNote');
  const [title, setTitle] = useState('');

  async function addNote(event: FormEvent) {
    event.preventDefault();
    await createNote.mutateAsync({ title }).then(() => setTitle(''), () => undefined);
  }

  return (
    <main style={{ fontFamily: 'system-ui, sans-serif', maxWidth: 560, margin: '3rem auto', padding: '0 1rem' }}>
      <h1>Notes</h1>
      <form onSubmit={addNote} style={{ display: 'flex', gap: 8, alignItems: 'end' }}>
        <label style={{ display: 'grid', gap: 4, flex: 1 }}>
          Title
          <input value={title} onChange={(e) => setTitle(e.target.value)} maxLength={200} required />
        </label>
        <button type="submit" disabled={createNote.isPending}>
          Add note
        </button>
      </form>
      {createNote.error && (
        <p role="alert" style={{ color: 'crimson' }}>
          {createNote.error.message}
        </p>
      )}
      {notes.error && <p role="alert">Could not load notes: {notes.error.message}</p>}
      {notes.data === undefined && !notes.error && <p>Loading…</p>}
      <ul aria-label="Notes">
        {notes.data?.map((note) => (
          <li key={note.id}>{note.title}</li>
        ))}
      </ul>
      {notes.data?.length === 0 && <p>No notes yet.</p>}
    </main>
  );
}
