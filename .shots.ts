import { chromium } from 'playwright-core';
const base = process.argv[2] ?? 'http://127.0.0.1:4999/_fw/dashboard/';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
for (const [label, viewport, scheme] of [['desk', { width: 1280, height: 800 }, 'light'], ['dark', { width: 1280, height: 800 }, 'dark'], ['phone', { width: 390, height: 844 }, 'light']] as const) {
  const page = await browser.newPage({ viewport, colorScheme: scheme });
  for (const view of (process.argv[3] ?? 'functions/createNote,data/notes,data,live,outbox,requests').split(',')) {
    await page.goto(base + '#/' + view);
    await page.waitForTimeout(1500);
    await page.screenshot({ path: `/tmp/dash/${label}-${view.replace('/', '_')}.png`, fullPage: label === 'phone' ? false : true });
  }
  await page.close();
}
await browser.close();
