import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { axeViolations } from './axe.ts';
import { post } from './app.ts';

/**
 * The notes templates' list (minimal-web in React, nuxt-web in Vue) as a user works it: edit in place,
 * delete after a confirmation, search, page a long list, with the keyboard and focus where the next
 * step is. Each function takes a page already showing the tenant's list, and writes through `runtimeUrl`
 * as that tenant (the page's identity: `dev-user`), so each test owns its data.
 */
export interface NotesTenant {
  runtimeUrl: string;
  tenantId: string;
}

const headers = (tenant: NotesTenant, userId = 'dev-user') => ({ 'x-fw-user-id': userId, 'x-fw-tenant-id': tenant.tenantId, 'x-fw-role': 'member' });

/** Adds notes in order (the last added is the newest, listed first); answers their ids. */
export async function seedNotes(tenant: NotesTenant, notes: Array<{ title: string; body?: string; userId?: string }>): Promise<string[]> {
  const ids: string[] = [];
  for (const { userId, ...note } of notes) {
    const created = await post(tenant.runtimeUrl, '/commands/createNote', note, headers(tenant, userId));
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    ids.push(created.body.result.id);
  }
  return ids;
}

const focusedText = (page: Page) => page.evaluate(() => `${document.activeElement?.tagName} ${document.activeElement?.getAttribute('aria-label') ?? ''} ${(document.activeElement as HTMLInputElement).value ?? ''}`.trim());
const headings = (page: Page) => page.getByRole('list', { name: 'Notes' }).getByRole('heading').allTextContents();

/** A note of the user's, edited in place: Escape cancels, a blank title is said under the field, the change shows before the answer and stays. */
export async function expectEditInPlace(page: Page, tenant: NotesTenant): Promise<void> {
  await seedNotes(tenant, [{ title: 'Draft title', body: 'Old details' }]);
  await expect.poll(() => headings(page), { timeout: 30_000 }).toEqual(['Draft title']);
  const list = page.getByRole('list', { name: 'Notes' });

  // Edit opens the note's form with the cursor in its title; Escape closes it and gives the cursor back to Edit.
  await list.getByRole('button', { name: 'Edit Draft title' }).click();
  const form = page.getByRole('form', { name: 'Edit note Draft title' });
  await expect.poll(() => focusedText(page), { timeout: 30_000 }).toBe('INPUT  Draft title');
  expect(await form.getByLabel('Details').inputValue()).toBe('Old details');
  await page.keyboard.press('Escape');
  await form.waitFor({ state: 'detached', timeout: 30_000 });
  await expect.poll(() => focusedText(page), { timeout: 30_000 }).toBe('BUTTON Edit Draft title');

  // A blank title: the server refuses it, said under the field (as the new-note form does), the form kept.
  await page.keyboard.press('Enter');
  const title = form.getByLabel('Title', { exact: true });
  await title.fill('   ');
  await form.getByRole('button', { name: 'Save' }).click();
  const problem = form.getByRole('alert');
  await problem.waitFor({ timeout: 30_000 });
  expect(await problem.textContent()).toBe('Title can’t be blank.');
  expect(await title.getAttribute('aria-invalid')).toBe('true');
  expect(await title.getAttribute('aria-describedby')).toBe(await problem.getAttribute('id'));
  await expect.poll(() => title.evaluate((input) => input === document.activeElement), { timeout: 30_000 }).toBe(true);
  expect(await page.getByRole('alert').count()).toBe(1);

  // Saved with Enter: the new text shows at once, marked Saving…, before the server answers.
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  await page.route('**/commands/updateNote', async (route) => {
    await released;
    await route.fallback();
  });
  await title.fill('Final title');
  await problem.waitFor({ state: 'detached', timeout: 30_000 });
  await form.getByLabel('Details').fill('New details');
  await title.press('Enter');
  const item = list.getByRole('listitem');
  await item.getByText('Saving…').waitFor({ timeout: 30_000 });
  expect(await headings(page)).toEqual(['Final title']);
  expect(await item.locator('p').textContent()).toBe('New details');
  release();
  await expect.poll(async () => [await item.count(), await item.locator('time').count(), await item.getByText('Saving…').count()], { timeout: 30_000 }).toEqual([1, 1, 0]);
  await page.unroute('**/commands/updateNote');
  // The cursor is back on the note's Edit button.
  await expect.poll(() => focusedText(page), { timeout: 30_000 }).toBe('BUTTON Edit Final title');

  // Stored: a fresh load shows the edit.
  await page.reload();
  await expect.poll(() => headings(page), { timeout: 30_000 }).toEqual(['Final title']);
  expect(await list.getByRole('listitem').locator('p').textContent()).toBe('New details');
}

/** Delete asks first (Keep, or Escape, keeps the note), then the note goes and the cursor moves to the next one; a colleague's note has no Edit or Delete. */
export async function expectDeleteWithConfirmation(page: Page, tenant: NotesTenant): Promise<void> {
  await seedNotes(tenant, [{ title: 'First' }, { title: 'Second' }, { title: 'Third' }, { title: 'A colleague’s', userId: 'colleague' }]);
  await expect.poll(() => headings(page), { timeout: 30_000 }).toEqual(['A colleague’s', 'Third', 'Second', 'First']);
  const list = page.getByRole('list', { name: 'Notes' });
  // Only the author may change a note (updateNote and deleteNote refuse anyone else): no buttons on a colleague's.
  expect(await list.getByRole('button', { name: 'Edit A colleague’s' }).count()).toBe(0);
  expect(await list.getByRole('button', { name: 'Delete A colleague’s' }).count()).toBe(0);

  await list.getByRole('button', { name: 'Delete Second' }).click();
  const confirm = list.getByRole('group', { name: 'Delete Second?' });
  await confirm.waitFor({ timeout: 30_000 });
  expect(await confirm.textContent()).toContain('Delete this note? This can’t be undone.');
  // The safe choice has the cursor: Enter now would keep the note.
  await expect.poll(() => focusedText(page), { timeout: 30_000 }).toBe('BUTTON');
  expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Keep');
  await page.keyboard.press('Escape');
  await confirm.waitFor({ state: 'detached', timeout: 30_000 });
  await expect.poll(() => focusedText(page), { timeout: 30_000 }).toBe('BUTTON Edit Second');
  expect(await headings(page)).toEqual(['A colleague’s', 'Third', 'Second', 'First']);

  await list.getByRole('button', { name: 'Delete Second' }).click();
  await confirm.getByRole('button', { name: 'Delete note' }).click();
  await expect.poll(() => headings(page), { timeout: 30_000 }).toEqual(['A colleague’s', 'Third', 'First']);
  // The cursor is on the note that took its place.
  await expect.poll(() => page.evaluate(() => document.activeElement?.querySelector('h3')?.textContent), { timeout: 30_000 }).toBe('First');
  await page.reload();
  await expect.poll(() => headings(page), { timeout: 30_000 }).toEqual(['A colleague’s', 'Third', 'First']);
}

/**
 * 45 notes: twenty at first, Show more twice (the cursor on the first note loaded), a loaded third page
 * still live; a search by words in the details (any case) narrows it, one that matches nothing says so
 * and Clear search (or Escape) brings the list back.
 */
export async function expectSearchAndPaging(page: Page, tenant: NotesTenant): Promise<void> {
  const names = Array.from({ length: 45 }, (_, i) => `Note ${String(i + 1).padStart(2, '0')}`);
  const ids = await seedNotes(tenant, names.map((title, i) => ({ title, body: (i + 1) % 10 === 7 ? 'Find the Needle here' : `Plain ${i + 1}` })));
  const newestFirst = [...names].reverse();
  // Opened on a long list (a first page read while the tenant had no notes would be its last, open-ended one).
  await page.reload();
  await expect.poll(() => headings(page), { timeout: 30_000 }).toEqual(newestFirst.slice(0, 20));
  const count = page.locator('#notes-heading .count');
  expect(await count.textContent()).toBe('20+');
  const more = page.getByRole('button', { name: 'Show more notes' });

  await more.click();
  await expect.poll(() => headings(page), { timeout: 30_000 }).toEqual(newestFirst.slice(0, 40));
  await expect.poll(() => page.evaluate(() => document.activeElement?.querySelector('h3')?.textContent), { timeout: 30_000 }).toBe('Note 25');
  await more.click();
  await expect.poll(() => headings(page), { timeout: 30_000 }).toEqual(newestFirst);
  expect(await more.count()).toBe(0);
  expect(await count.textContent()).toBe('45');
  await expect.poll(() => page.evaluate(() => document.activeElement?.querySelector('h3')?.textContent), { timeout: 30_000 }).toBe('Note 05');

  // The third page is live too: a note deleted elsewhere leaves it.
  expect((await post(tenant.runtimeUrl, '/commands/deleteNote', { id: ids[0] }, headers(tenant))).status).toBe(200);
  await expect.poll(() => headings(page), { timeout: 30_000 }).toEqual(newestFirst.slice(0, 44));

  const search = page.getByRole('searchbox', { name: 'Search notes' });
  await search.fill('NEEDLE');
  await expect.poll(() => headings(page), { timeout: 30_000 }).toEqual(['Note 37', 'Note 27', 'Note 17', 'Note 07']);
  expect((await page.locator('#notes-heading').textContent())?.trim()).toBe('Matching notes 4');
  await search.fill('no such words');
  const none = page.getByText('No notes match “no such words”.');
  await none.waitFor({ timeout: 30_000 });
  await page.getByRole('button', { name: 'Clear search' }).click();
  // The whole list again, from its newest note.
  const unsearched = async () => [(await page.locator('#notes-heading').textContent())?.trim().startsWith('Your notes'), (await headings(page)).slice(0, 20)];
  await expect.poll(unsearched, { timeout: 30_000 }).toEqual([true, newestFirst.slice(0, 20)]);
  expect(await search.inputValue()).toBe('');
  await search.fill('needle');
  await expect.poll(() => headings(page), { timeout: 30_000 }).toEqual(['Note 37', 'Note 27', 'Note 17', 'Note 07']);
  await search.press('Escape');
  await expect.poll(unsearched, { timeout: 30_000 }).toEqual([true, newestFirst.slice(0, 20)]);
  expect(await search.inputValue()).toBe('');
}

/**
 * axe-core at 0 violations on the list with a note being edited and another asking before its delete,
 * at 1280 and 390 wide, light and dark; screenshots in /tmp/fw-<name>-<width>-<scheme>.png to look at.
 */
export async function expectAccessibleEverywhere(page: Page, tenant: NotesTenant, name: string): Promise<void> {
  await seedNotes(tenant, [
    ...Array.from({ length: 20 }, (_, i) => ({ title: `Idea ${i + 1}`, ...(i % 3 === 0 ? { body: 'A longer thought that goes on for a while, the way notes sometimes do.' } : {}) })),
    { title: 'Call the plumber', body: 'Ask about the kitchen tap.\nTuesday or Wednesday morning.' },
    { title: 'A note from a colleague', userId: 'colleague' },
    { title: 'Book club', body: 'Chapters 4–6 of “The Left Hand of Darkness”.' },
  ]);
  await page.reload();
  const list = page.getByRole('list', { name: 'Notes' });
  await expect.poll(() => list.getByRole('listitem').count(), { timeout: 30_000 }).toBe(20);
  const violations: string[] = [];
  for (const scheme of ['light', 'dark'] as const) {
    for (const width of [1280, 390]) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width, height: 900 });
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: `/tmp/fw-${name}-${width}-${scheme}.png`, fullPage: true });
      violations.push(...(await axeViolations(page)).map((v) => `${width} ${scheme}: ${v}`));
      await list.getByRole('button', { name: 'Edit Idea 20' }).click();
      await list.getByRole('button', { name: 'Delete Idea 19' }).click();
      await page.screenshot({ path: `/tmp/fw-${name}-open-${width}-${scheme}.png` });
      violations.push(...(await axeViolations(page)).map((v) => `${width} ${scheme} open: ${v}`));
      await list.getByRole('button', { name: 'Keep' }).click();
      await list.getByRole('button', { name: 'Cancel' }).click();
      await list.getByRole('form').waitFor({ state: 'detached', timeout: 30_000 });
    }
  }
  expect(violations).toEqual([]);
}
