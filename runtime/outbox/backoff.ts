export interface BackoffOptions {
  /** The ceiling of the first retry's delay (default 1 000 ms); it doubles with every attempt. */
  baseMs?: number;
  /** The largest ceiling (default 5 minutes). */
  capMs?: number;
  /** A number in [0, 1) (default `Math.random`); tests pass `() => 1` for the ceiling itself. */
  random?: () => number;
}

export type ResolvedBackoff = Required<BackoffOptions>;

export function resolveBackoff(options: BackoffOptions = {}): ResolvedBackoff {
  const resolved = { baseMs: options.baseMs ?? 1000, capMs: options.capMs ?? 5 * 60_000, random: options.random ?? Math.random };
  if (!(resolved.baseMs >= 0) || !(resolved.capMs >= resolved.baseMs)) {
    throw new TypeError(`fw: backoff needs 0 ≤ baseMs ≤ capMs, got baseMs ${resolved.baseMs}, capMs ${resolved.capMs}.`);
  }
  return resolved;
}

/**
 * The wait before retrying after failed attempt number `attempt` (1, 2, …): exponential backoff with
 * full jitter — a random delay between 0 and min(cap, base · 2^(attempt-1)) — so the retries of many
 * events that failed together (a provider outage) spread out instead of arriving in waves.
 * (AWS Architecture Blog, "Exponential Backoff And Jitter".)
 *
 * @example
 *   backoffDelay(3, resolveBackoff({ random: () => 1 })) // 4000
 */
export function backoffDelay(attempt: number, backoff: ResolvedBackoff): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 52);
  const ceiling = Math.min(backoff.capMs, backoff.baseMs * 2 ** exponent);
  return Math.round(Math.min(1, Math.max(0, backoff.random())) * ceiling);
}
