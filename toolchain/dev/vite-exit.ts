/**
 * fw dev owns the process's exit. A Vite dev server that is not in middleware mode arranges its own:
 * on SIGTERM (or when stdin ends) it closes itself and calls `process.exit()` with 143, which cuts off
 * fw dev's shutdown — the live streams, the API server, the runtime and its database, the typecheck
 * worker — halfway. fw dev closes Vite as part of that shutdown (dev-server.ts), so the handlers Vite
 * adds are taken away again, on every (re)start of its server: `config` runs before Vite adds them,
 * `configureServer` after.
 */
import type { Plugin } from 'vite';
import { resolveConfig } from '../../runtime/config/resolve-config.ts';

type Listener = (...args: unknown[]) => void;

export function fwDevOwnsExit(): Plugin {
  let sigterm = new Set<Listener>();
  let stdinEnd = new Set<Listener>();
  // Vite only listens on stdin outside CI; looking at process.stdin would otherwise open it for nothing.
  const watchesStdin = () => resolveConfig().given('CI') !== 'true';
  return {
    name: 'fw:dev-owns-exit',
    config() {
      sigterm = new Set(process.listeners('SIGTERM') as Listener[]);
      if (watchesStdin()) stdinEnd = new Set(process.stdin.listeners('end') as Listener[]);
    },
    configureServer() {
      for (const listener of process.listeners('SIGTERM') as Listener[]) if (!sigterm.has(listener)) process.off('SIGTERM', listener);
      if (watchesStdin()) for (const listener of process.stdin.listeners('end') as Listener[]) if (!stdinEnd.has(listener)) process.stdin.off('end', listener);
    },
  };
}
