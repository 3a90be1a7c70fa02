import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * The notes templates' form (minimal-web in React, nuxt-web in Vue) refusing a title of spaces, as a
 * user sees it: no optimistic note while the command is on its way; then one plain note under the
 * field, tied to it (the banner is for other failures), the text back in the form and the cursor in the
 * field; typing a fix takes the note away, leaving `retyped` in the title. The page shows an empty list
 * ("No notes yet.") when called.
 */
export async function expectTitleRefusedUnderField(page: Page, retyped: string): Promise<void> {
  const title = page.getByLabel('Title');
  // Only spaces: the browser lets it through (required), the command's trimmed min(1) refuses it. While
  // the command is held, the list stays empty: no optimistic note for a title the server will refuse.
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let sent = false;
  await page.route('**/commands/createNote', async (route) => {
    sent = true;
    await released;
    await route.fallback();
  });
  await title.fill('   ');
  await page.getByRole('button', { name: 'Add note' }).click();
  await expect.poll(() => sent, { timeout: 30_000 }).toBe(true);
  expect(await page.getByRole('list', { name: 'Notes' }).count()).toBe(0);
  expect(await page.getByText('No notes yet.').count()).toBe(1);
  release();
  const problem = page.getByRole('alert');
  await problem.waitFor({ timeout: 30_000 });
  await page.unroute('**/commands/createNote');
  expect(await problem.count()).toBe(1);
  expect(await problem.textContent()).toBe('Title can’t be blank.');
  expect(await title.getAttribute('aria-invalid')).toBe('true');
  expect(await title.getAttribute('aria-describedby')).toBe(await problem.getAttribute('id'));
  expect(await title.inputValue()).toBe('   ');
  // The cursor is where the fix is.
  await expect.poll(() => title.evaluate((input) => input === document.activeElement), { timeout: 30_000 }).toBe(true);
  await title.fill(retyped);
  await problem.waitFor({ state: 'detached', timeout: 30_000 });
  expect(await title.getAttribute('aria-invalid')).toBe(null);
}
