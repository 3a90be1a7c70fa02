import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * The notes templates' form (minimal-web in React, nuxt-web in Vue) refusing a title of spaces, as a
 * user sees it: one plain note under the field, tied to it (the banner is for other failures); the
 * optimistic note rolled back and the text back in the form; typing a fix takes the note away, leaving
 * `retyped` in the title. The page shows an empty list ("No notes yet.") when called.
 */
export async function expectTitleRefusedUnderField(page: Page, retyped: string): Promise<void> {
  const title = page.getByLabel('Title');
  // Only spaces: the browser lets it through (required), the command's trimmed min(1) refuses it.
  await title.fill('   ');
  await page.getByRole('button', { name: 'Add note' }).click();
  const problem = page.getByRole('alert');
  await problem.waitFor({ timeout: 30_000 });
  expect(await problem.count()).toBe(1);
  expect(await problem.textContent()).toBe('Title can’t be blank.');
  expect(await title.getAttribute('aria-invalid')).toBe('true');
  expect(await title.getAttribute('aria-describedby')).toBe(await problem.getAttribute('id'));
  await page.getByText('No notes yet.').waitFor({ timeout: 30_000 });
  expect(await title.inputValue()).toBe('   ');
  await title.fill(retyped);
  await problem.waitFor({ state: 'detached', timeout: 30_000 });
  expect(await title.getAttribute('aria-invalid')).toBe(null);
}
