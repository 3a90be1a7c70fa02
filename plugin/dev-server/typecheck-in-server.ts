import { writeSync } from 'node:fs';
import type { ViteDevServer } from 'vite';
import { startTypecheck } from './typecheck.ts';
import { typeOverlay, viteOverlayChannel } from './typecheck-overlay.ts';

/** The checks running in this process, by app root, with their overlay channels. */
const running = new Map<string, ReturnType<typeof viteOverlayChannel>>();

/**
 * The background typecheck a web dev server runs for itself, its errors in the terminal (stderr) and in
 * this server's overlay: what fw's Nuxt module asks for, since `nuxt dev`'s overlay lives in Nuxt's
 * process, out of fw dev's reach. One check per app root and process: Nuxt's restart (nuxt.config
 * edited) makes a new Vite server and a new fw plugin, and the same check goes on, its overlay moved to
 * the new server's websocket.
 *
 * @example
 *   // in fw's Vite plugin, configureServer(server):
 *   if (options.typecheck) typecheckInServer(root, server);
 */
export function typecheckInServer(root: string, server: Pick<ViteDevServer, 'ws'>): void {
  const known = running.get(root);
  if (known) return known.attach(server);
  const overlay = viteOverlayChannel();
  running.set(root, overlay);
  overlay.attach(server);
  startTypecheck({ root, log: toStderr, onResult: typeOverlay(root, overlay.channel) });
}

/**
 * A line to the process's real stderr. Nuxt's dev server wraps `process.stderr` into its logger, which
 * prints to stdout, and `fw dev --json` keeps Nuxt's stdout quiet: the lines would be lost there.
 */
function toStderr(line: string): void {
  try {
    writeSync(2, `${line}\n`);
  } catch {
    // A full non-blocking pipe (EAGAIN): through the stream, which queues.
    process.stderr.write(`${line}\n`);
  }
}
