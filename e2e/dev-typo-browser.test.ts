import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { createTestApp, type RunningFw, startFw } from './support/app.ts';
import { hasChromium, launchChromium } from './support/browser.ts';
import { until } from './support/until.ts';

const checked = { timeoutMs: 240_000, intervalMs: 250 };

// #45.3: a misspelt entry name in web code. fw's analysis knows the fix ("Did you mean 'createNote'?"),
// TypeScript knows only TS2345: the overlay leads with fw's finding, also once the typecheck's errors
// arrive, and the page — whose hook throws while rendering — shows the template's error boundary, with
// the same suggestion, instead of going blank.
describe.skipIf(!hasChromium)('a misspelt entry name in web code, in fw dev', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw;
  let browser: Browser;

  beforeAll(async () => {
    // Inside this checkout, so the app's typescript (for fw dev's typecheck) and React resolve.
    app = await createTestApp('minimal-web', {}, { insideRepo: true });
    const file = path.join(app.dir, 'web/src/App.tsx');
    await writeFile(file, (await readFile(file, 'utf8')).replace("useCommand('createNote'", "useCommand('createNot'"));
    dev = await startFw(['dev', '--port', '0', '--web-port', '0', '--json', '--typecheck'], { cwd: app.dir, timeoutMs: 120_000 });
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    await app?.remove();
  });

  it("shows fw's suggestion in the overlay above the type errors, and the page an error boundary", async () => {
    // The typecheck has run: its TS2345 for the name is in the terminal.
    await until(async () => dev.stderr().includes('TS2345'), 'the type error', checked);
    const page = await browser.newPage();
    await page.goto(dev.ready.webUrl as string);

    const boundary = page.getByRole('alert').filter({ hasText: 'This page failed to render' });
    await boundary.waitFor();
    expect(await boundary.locator('p').textContent()).toBe(
      'fw: the api object has no command named "createNot". Did you mean \'createNote\'? (known: createNote, deleteNote, updateNote). Check the name, or regenerate the api with `fw generate`.',
    );

    const overlay = page.locator('vite-error-overlay');
    await overlay.waitFor({ state: 'attached' });
    const message = await overlay.evaluate((el) => el.shadowRoot?.querySelector('.message-body')?.textContent ?? '');
    expect(message.split('\n').slice(0, 3)).toEqual([
      "orphan_ui_action: useCommand('createNot') names no entry: this UI action points to nothing the runtime serves.",
      "hint: Did you mean 'createNote'? Otherwise create the entry or remove the call.",
      'run: fw inspect client --json',
    ]);
    // The type errors follow it.
    expect(message).toContain("web/src/App.tsx:26:33 TS2345 Argument of type '\"createNot\"'");
    await page.close();
  }, 300_000);
});
