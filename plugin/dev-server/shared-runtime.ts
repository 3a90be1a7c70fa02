import path from 'node:path';
import type { DevRuntime } from './dev-runtime.ts';

// `fw dev` starts the runtime before Vite loads the app's vite.config.ts, whose fw() plugin must use
// that same runtime (one database, one app) rather than start a second. A registry keyed by a global
// symbol survives the config being loaded as a separate module instance.
const registry = Symbol.for('fw.sharedDevRuntimes');

function runtimes(): Map<string, DevRuntime> {
  const holder = globalThis as unknown as Record<symbol, Map<string, DevRuntime> | undefined>;
  return (holder[registry] ??= new Map());
}

/** Offers a runtime to the fw() Vite plugin of the app at `runtime.root`; returns a withdraw function. */
export function shareRuntime(runtime: DevRuntime): () => void {
  const key = path.resolve(runtime.root);
  runtimes().set(key, runtime);
  return () => {
    if (runtimes().get(key) === runtime) runtimes().delete(key);
  };
}

/** The runtime `fw dev` shares for this app root, if any. */
export function claimSharedRuntime(root: string): DevRuntime | undefined {
  return runtimes().get(path.resolve(root));
}
