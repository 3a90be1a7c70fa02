/**
 * Opening the dashboard from `fw dev` (`--open`, and the `d` key on its terminal). The browser is
 * chosen as Vite chooses it for `server.open` (fw dev's API-only and Nuxt modes have no Vite server to
 * ask, so the convention is followed here, without a dependency): `BROWSER` names a browser command or
 * app, or a Node script (`*.js`) that is run with the URL as its argument — what tests use, instead of
 * a real browser — or `none`; `BROWSER_ARGS` adds arguments. Unset, the system's opener shows the URL
 * in the default browser (`open` on macOS, `start` on Windows, `xdg-open` elsewhere).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { type FwConfig, resolveConfig } from '../../runtime/config/resolve-config.ts';

export function openBrowser(url: string, options: { log: (line: string) => void; config?: FwConfig }): void {
  const config = options.config ?? resolveConfig();
  const browser = config.get('BROWSER') ?? '';
  if (browser.toLowerCase() === 'none') return;
  const extra = (config.get('BROWSER_ARGS') ?? '').split(' ').filter(Boolean);
  const [command, args]: [string, string[]] = browser.toLowerCase().endsWith('.js')
    ? [process.execPath, [browser, url]]
    : browser
      ? process.platform === 'darwin'
        ? ['open', ['-a', browser, url, ...(extra.length ? ['--args', ...extra] : [])]]
        : [browser, [...extra, url]]
      : process.platform === 'darwin'
        ? ['open', [url]]
        : process.platform === 'win32'
          ? ['cmd', ['/c', 'start', '""', url]]
          : ['xdg-open', [url]];
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: process.platform !== 'win32', windowsHide: true, windowsVerbatimArguments: command === 'cmd' });
    child.on('error', (error) => options.log(`fw dev: could not open a browser (${error.message}); open ${url} yourself, or set BROWSER.`));
    child.unref();
  } catch (error) {
    options.log(`fw dev: could not open a browser (${(error as Error).message}); open ${url} yourself, or set BROWSER.`);
  }
}

export interface DevKey {
  key: string;
  description: string;
  action(): void;
}

/**
 * Keys typed on fw dev's terminal, each followed by Enter, as Vite's own shortcuts are read: lines, so
 * the terminal stays in its usual mode and Ctrl-C still stops fw dev. Only when stdin is a terminal and
 * not under CI (`CI=true`: stdin is left alone). Returns how to stop reading, or undefined when not bound.
 */
export function bindDevKeys(keys: readonly DevKey[], options: { input?: NodeJS.ReadStream; config?: FwConfig } = {}): (() => void) | undefined {
  const input = options.input ?? process.stdin;
  if (!input.isTTY || (options.config ?? resolveConfig()).get('CI') === 'true') return undefined;
  const lines = createInterface({ input });
  lines.on('line', (line) => keys.find((k) => k.key === line.trim().toLowerCase())?.action());
  return () => lines.close();
}
