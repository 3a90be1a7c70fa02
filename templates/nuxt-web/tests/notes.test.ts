import { startTestApp, type TestApp } from 'fwjs/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { api } from '../src/fw/_generated/api.ts';

// The app's entries through fw's runtime on a throwaway in-memory database, called with the typed
// client the web app uses. Run with `npm test` (`fw test`).
const ACME = '00000000-0000-4000-8000-000000000001';
const GLOBEX = '00000000-0000-4000-8000-000000000002';

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
