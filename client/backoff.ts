/** Reconnection delays: exponential backoff with full jitter. */
export interface BackoffOptions {
  /** The ceiling of the first delay (ms). */
  minMs: number;
  /** The largest ceiling, reached by doubling (ms). */
  maxMs: number;
  /** A number in [0, 1); `Math.random` unless a test fixes it. */
  random?: () => number;
}

/**
 * The delay before retry number `attempt` (0 for the first): a random time between 0 and
 * `min(maxMs, minMs · 2^attempt)`. Full jitter spreads the reconnects of many clients after an outage.
 *
 * @example
 *   retryDelay(3, { minMs: 250, maxMs: 15_000 }) // somewhere in [0, 2000]
 */
export function retryDelay(attempt: number, { minMs, maxMs, random = Math.random }: BackoffOptions): number {
  const ceiling = Math.min(maxMs, minMs * 2 ** Math.min(attempt, 30));
  return Math.round(random() * Math.max(ceiling, 0));
}
