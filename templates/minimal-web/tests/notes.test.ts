import { startTestApp, type TestApp } from 'fwjs/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { api } from '../src/fw/_generated/api.ts';

// The app's entries through fw's runtime on a throwaway in-memory database, called with the typed
// client the web app uses. Run with `npm test` (`fw test`).
const ACME = '00000000-0000-4000-8000-000000000001';
const GLOBEX = '00000000-0000-4000-8000-000000000002';
const INITECH = '00000000-0000-4000-8000-000000000003';
const UMBRELLA = '00000000-0000-4000-8000-000000000004';

let fw: TestApp<typeof api>;
beforeAll(async () => {
  fw = await startTestApp({ api });
}, 60_000);
afterAll(() => fw?.close());

it('creates a note that only its own tenant lists', async () => {
  const alice = fw.client({ userId: 'alice', tenantId: ACME, role: 'member' });
  const note = await alice.command('createNote', { title: 'Groceries' });
  expect(note).toMatchObject({ title: 'Groceries', author_id: 'alice' });
  expect((await alice.query('listNotes', {})).map((n) => n.id)).toEqual([note.id]);
  expect(await fw.client({ userId: 'bob', tenantId: GLOBEX, role: 'member' }).query('listNotes', {})).toEqual([]);
});

it('lets only a note’s author edit or delete it; another tenant cannot even find it', async () => {
  const carol = fw.client({ userId: 'carol', tenantId: INITECH, role: 'member' });
  const dave = fw.client({ userId: 'dave', tenantId: INITECH, role: 'member' });
  const eve = fw.client({ userId: 'eve', tenantId: GLOBEX, role: 'member' });
  const note = await carol.command('createNote', { title: 'Draft', body: 'first words' });

  const edited = await carol.command('updateNote', { id: note.id, title: ' Final ', body: '' });
  expect(edited).toMatchObject({ id: note.id, title: 'Final', body: null, author_id: 'carol' });
  // A blank title is refused under its field, as when creating.
  await expect(carol.command('updateNote', { id: note.id, title: '  ' })).rejects.toMatchObject({ code: 'validation_failed', diagnostics: [{ path: 'args.title', code: 'too_small' }] });

  // A colleague sees the note (not theirs: mine is false) but may not change it.
  const seen = await dave.query('findNotes', { page: { cursor: null, numItems: 10 } });
  expect(seen.page.map((n) => [n.title, n.mine])).toEqual([['Final', false]]);
  await expect(dave.command('updateNote', { id: note.id, title: 'Mine now' })).rejects.toMatchObject({ code: 'forbidden', message: 'Only the author of a note can edit it.' });
  await expect(dave.command('deleteNote', { id: note.id })).rejects.toMatchObject({ code: 'forbidden', message: 'Only the author of a note can delete it.' });
  // Another tenant's caller: row-level security hides it.
  await expect(eve.command('updateNote', { id: note.id, title: 'Hijacked' })).rejects.toMatchObject({ code: 'not_found' });
  await expect(eve.command('deleteNote', { id: note.id })).rejects.toMatchObject({ code: 'not_found' });
  expect((await carol.query('listNotes', {})).map((n) => n.title)).toEqual(['Final']);

  expect(await carol.command('deleteNote', { id: note.id })).toEqual({ id: note.id });
  expect(await carol.query('listNotes', {})).toEqual([]);
  await expect(carol.command('deleteNote', { id: note.id })).rejects.toMatchObject({ code: 'not_found' });
});

it('finds notes by words in the title or details, a page at a time, newest first', async () => {
  const frank = fw.client({ userId: 'frank', tenantId: UMBRELLA, role: 'member' });
  for (let n = 1; n <= 5; n++) await frank.command('createNote', { title: `Note ${n}`, body: n % 2 === 0 ? 'about 100% cotton' : 'plain' });
  await frank.command('createNote', { title: 'Cotton socks' });

  const first = await frank.query('findNotes', { page: { cursor: null, numItems: 4 } });
  expect(first.page.map((n) => n.title)).toEqual(['Cotton socks', 'Note 5', 'Note 4', 'Note 3']);
  expect(first.page.every((n) => n.mine)).toBe(true);
  expect(first.isDone).toBe(false);
  const second = await frank.query('findNotes', { page: { cursor: first.continueCursor, numItems: 4 } });
  expect(second.page.map((n) => n.title)).toEqual(['Note 2', 'Note 1']);
  expect(second.isDone).toBe(true);

  // Case-insensitive, in the title or the details; % is a character, not a wildcard.
  const cotton = await frank.query('findNotes', { search: 'COTTON', page: { cursor: null, numItems: 10 } });
  expect(cotton.page.map((n) => n.title)).toEqual(['Cotton socks', 'Note 4', 'Note 2']);
  const percent = await frank.query('findNotes', { search: '100%', page: { cursor: null, numItems: 10 } });
  expect(percent.page.map((n) => n.title)).toEqual(['Note 4', 'Note 2']);
  expect((await frank.query('findNotes', { search: '0%c', page: { cursor: null, numItems: 10 } })).page).toEqual([]);
});
