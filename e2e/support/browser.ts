import { existsSync } from 'node:fs';
import { type Browser, type ConsoleMessage, type Page, chromium } from 'playwright-core';

/** Debian's Chromium (`apt-get install -y chromium`); tests never download a browser. */
export const chromiumPath = process.env.FW_CHROMIUM ?? '/usr/bin/chromium';
export const hasChromium = existsSync(chromiumPath);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}

/**
 * Resolves once the page's Vite HMR client says it is connected. Vite sends a build error only to the
 * clients connected when it happens, so a test that edits a file to see the overlay waits for this first.
 * Call before `page.goto`.
 */
export function viteConnected(page: Page): Promise<void> {
  return new Promise((resolve) => {
    const listener = (message: ConsoleMessage) => {
      if (!message.text().includes('[vite] connected')) return;
      page.off('console', listener);
      resolve();
    };
    page.on('console', listener);
  });
}

/**
 * Holds `page`'s requests to `pattern` until the returned function is called; then they (and later
 * ones) go on as usual. For states that last only until an answer arrives (loading, pending).
 */
export async function holdRequests(page: Page, pattern: string): Promise<() => void> {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  await page.route(pattern, async (route) => {
    await released;
    await route.fallback();
  });
  return release;
}
