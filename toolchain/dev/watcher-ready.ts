import path from 'node:path';
import type { ViteDevServer } from 'vite';

/**
 * Resolves once Vite's watcher watches every one of `dirs` (absolute), or after `timeoutMs`. The
 * watcher's own `ready` event is no use here: it fires after the first paths it was given (the config
 * file) while the app's folders are added and scanned later, and an edit made before its folder is
 * watched goes unnoticed. `fw dev` reports itself ready only after this.
 */
export async function untilWatched(server: ViteDevServer, dirs: readonly string[], timeoutMs = 10_000): Promise<void> {
  if (server.config.server.watch === null || dirs.length === 0) return;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const watched = new Set(Object.keys(server.watcher.getWatched()).map((dir) => path.resolve(dir)));
    if (dirs.every((dir) => watched.has(path.resolve(dir))) || Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
