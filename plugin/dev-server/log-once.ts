import type { FwError } from '../../runtime/core/errors.ts';

/** How long a failure stays "the same one" after it was last seen. */
const QUIET_MS = 10_000;

/**
 * The terminal's line for a server-side failure in fw dev, printed once: the same failure (code,
 * message, place) seen again before it has been quiet for 10 s is not printed again. One broken live
 * query fails for every subscriber, for React's StrictMode second subscription, for every rerun and
 * every Retry — one line says it; each occurrence still has its trace in the dashboard, and the
 * browser is told every time. `forget()` (an app reload: the code changed) prints the next one again.
 */
export function logOnce(log: (error: FwError, traceId: string) => void, now: () => number = Date.now): { log(error: FwError, traceId: string): void; forget(): void } {
  const seen = new Map<string, number>();
  return {
    log(error, traceId) {
      const key = `${error.code}\n${error.message}\n${error.diagnostics[0]?.path ?? ''}`;
      const last = seen.get(key);
      const at = now();
      seen.delete(key);
      seen.set(key, at);
      // The oldest goes first: a long session of distinct failures keeps no more than 100.
      if (seen.size > 100) seen.delete(seen.keys().next().value!);
      if (last === undefined || at - last >= QUIET_MS) log(error, traceId);
    },
    forget: () => seen.clear(),
  };
}
