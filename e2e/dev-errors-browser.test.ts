import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createTestApp, type RunningFw, startFw } from './support/app.ts';
import { hasChromium, launchChromium, viteConnected } from './support/browser.ts';
import { until } from './support/until.ts';

const STATEMENT_FAILS = 'column "stauts" does not exist';

// #45.3: in fw dev a failing liveQuery or command shows where the developer looks — Vite's overlay and
// the browser's console, with the code, the message and the failing statement's file:line — and the
// terminal says it once, however often the page meets it.
describe.skipIf(!hasChromium)('server errors in the browser, in fw dev', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw;
  let browser: Browser;

  beforeAll(async () => {
    app = await createTestApp(
      'minimal-web',
      {
        // The page's live list (a page of findNotes) reads a column that does not exist, in the handler's third line.
        'src/queries/findNotes.ts': [
          "import { liveQuery, paginationArgs, z } from 'fwjs';",
          '',
          'export default liveQuery({',
          "  policy: 'user',",
          '  args: { search: z.string().optional(), page: paginationArgs },',
          '  handler: (ctx) => {',
          "    const notes = ctx.db.selectFrom('notes');",
          "    return notes.select(['id', 'stauts' as never]).execute();",
          '  },',
          '});',
          '',
        ].join('\n'),
        // And its form's command writes one.
        'src/commands/createNote.ts': [
          "import { command, z } from 'fwjs';",
          '',
          'export default command({',
          "  policy: 'user',",
          '  args: { title: z.string(), body: z.string().optional() },',
          '  handler: (ctx, args) =>',
          "    ctx.db.insertInto('notes')",
          '      .values({ title: args.title, stauts: 1 } as never)',
          '      .execute(),',
          '});',
          '',
        ].join('\n'),
      },
      { insideRepo: true },
    );
    dev = await startFw(['dev', '--port', '0', '--json'], { cwd: app.dir, timeoutMs: 120_000 });
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    await app?.remove();
  });

  const overlayText = (page: Page) => page.locator('vite-error-overlay').evaluate((el) => el.shadowRoot?.querySelector('.window')?.textContent ?? '');
  const terminalLines = (text: string) => dev.stderr().split('\n').filter((line) => line.includes(text));

  it('a failing liveQuery: the overlay and a console line say its code, message and statement; the terminal says it once', async () => {
    const page = await browser.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    const connected = viteConnected(page);
    await page.goto(dev.ready.webUrl as string);
    await connected;
    const banner = page.getByRole('alert').filter({ hasText: 'Could not load notes' });
    await banner.waitFor();
    const firstTrace = await banner.locator('code').nth(1).textContent();

    const overlay = page.locator('vite-error-overlay');
    await overlay.waitFor({ state: 'attached' });
    expect(await overlayText(page)).toContain(`internal [trace ${firstTrace}]: liveQuery findNotes: ${STATEMENT_FAILS}`);
    expect(await overlayText(page)).toContain(`src/queries/findNotes.ts:8:52: liveQuery findNotes failed: ${STATEMENT_FAILS}`);
    expect(consoleErrors).toContain(`fw: internal: liveQuery findNotes: ${STATEMENT_FAILS}\n    at src/queries/findNotes.ts:8:52 [trace ${firstTrace}]`);

    // Retry meets the same failure (a new trace): the browser is told again, the terminal not. (By
    // keyboard: the overlay covers the page.)
    await banner.getByRole('button', { name: 'Retry' }).press('Enter');
    await until(async () => {
      const trace = await banner.locator('code').nth(1).textContent().catch(() => null);
      return trace && trace !== firstTrace ? trace : undefined;
    }, 'a second failure');
    await until(async () => consoleErrors.filter((e) => e.includes(STATEMENT_FAILS)).length === 2 || undefined, 'a second console line');
    await overlay.waitFor({ state: 'attached' });
    expect(terminalLines(`liveQuery findNotes: ${STATEMENT_FAILS}`)).toHaveLength(1);
    expect(terminalLines(`liveQuery findNotes: ${STATEMENT_FAILS}`)[0]).toContain(`fw: internal [trace ${firstTrace}]`);
    await page.close();
  });

  it('a failing command: the overlay and a console line say its code, message and statement', async () => {
    const page = await browser.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    await page.goto(dev.ready.webUrl as string);
    await page.getByRole('alert').filter({ hasText: 'Could not load notes' }).waitFor();
    // Enter in the title adds the note (the live list's overlay covers the button).
    await page.getByLabel('Title').fill('Buy milk');
    await page.getByLabel('Title').press('Enter');

    const failure = `command createNote: column "stauts" of relation "notes" does not exist`;
    const line = await until(async () => consoleErrors.find((e) => e.includes(failure)), 'the console line');
    expect(line).toMatch(new RegExp(`^fw: internal: ${failure}\\n    at src/commands/createNote\\.ts:9:8 \\[trace [0-9a-f]{32}\\]$`));
    const trace = /\[trace ([0-9a-f]{32})\]/.exec(line)![1];
    await until(async () => ((await overlayText(page).catch(() => '')).includes(failure) ? true : undefined), 'the overlay');
    expect(await overlayText(page)).toContain(`internal [trace ${trace}]: ${failure}`);
    expect(await overlayText(page)).toContain(`src/commands/createNote.ts:9:8: command createNote failed: column "stauts" of relation "notes" does not exist`);
    expect(terminalLines(failure)).toHaveLength(1);
    await page.close();
  });
});
