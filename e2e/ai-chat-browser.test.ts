import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, runFw, type RunningFw, startFw } from './support/app.ts';
import { hasChromium, launchChromium } from './support/browser.ts';

const devAuth = { 'x-fw-user-id': 'dev', 'x-fw-tenant-id': '00000000-0000-4000-8000-000000000001' };

// A page that mounts the component `fw make ai-chat` writes, under the template's FwProvider.
const chatPage: Record<string, string> = {
  'web/chat.html': '<!doctype html><html><body><div id="root"></div><script type="module" src="/src/chat.tsx"></script></body></html>',
  'web/src/chat.tsx': `import { createRoot } from 'react-dom/client';
import { HelperChat } from './components/HelperChat.tsx';
import { FwProvider } from './lib/fw.ts';

createRoot(document.getElementById('root')!).render(
  <FwProvider apiUrl="" devAuth={{ userId: 'dev', tenantId: '00000000-0000-4000-8000-000000000001', role: 'member' }}>
    <HelperChat />
  </FwProvider>,
);
`,
};

if (!hasChromium) console.warn('Chromium not found at /usr/bin/chromium: the AI chat browser suite is skipped (apt-get install -y chromium).');

describe.skipIf(!hasChromium)('the chat that fw make ai-chat writes, in a real browser', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw;
  let browser: Browser;

  beforeAll(async () => {
    app = await createTestApp('minimal-web', chatPage, { insideRepo: true });
    const made = await runFw(['make', 'ai-chat', 'helper', '--json'], { cwd: app.dir });
    expect(made.code, made.stdout + made.stderr).toBe(0);
    dev = await startFw(['dev', '--port', '0', '--web-port', '0', '--json'], { cwd: app.dir, timeoutMs: 90_000, env: { FW_AI: 'mock' } });
    browser = await launchChromium();
  }, 150_000);

  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    await app?.remove();
  });

  it('asks before a write, writes on Approve, and writes nothing on Deny', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${dev.ready.webUrl as string}/chat.html`);
    const input = page.getByTestId('ai-chat-input');

    await input.fill('call createNote {"title":"Approved in the browser"}');
    await page.getByTestId('ai-chat-send').click();
    await page.getByTestId('ai-approve').waitFor({ timeout: 30_000 });
    const notes = async () => (await post(dev.ready.serverUrl as string, '/queries/listNotes', {}, devAuth)).body.result.map((n: { title: string }) => n.title);
    expect(await notes()).not.toContain('Approved in the browser');
    await page.getByTestId('ai-approve').click();
    await page.locator('[data-testid="ai-tool"][data-state="output-available"]').waitFor({ timeout: 30_000 });
    await expect.poll(notes, { timeout: 10_000 }).toContain('Approved in the browser');

    await input.fill('call createNote {"title":"Denied in the browser"}');
    await page.getByTestId('ai-chat-send').click();
    await page.getByTestId('ai-deny').waitFor({ timeout: 30_000 });
    await page.getByTestId('ai-deny').click();
    await page.getByText('createNote: not approved').waitFor({ timeout: 30_000 });
    expect(await notes()).not.toContain('Denied in the browser');
    expect(problems).toEqual([]);
    await page.close();
  });
});
