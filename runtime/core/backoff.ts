/**
 * Retry delays, for every retry loop fw has (the browser's live stream, the outbox's deliveries, the
 * live listener's reconnects): exponential backoff with jitter. The ceiling doubles from `baseMs` with
 * each retry up to `capMs`, and the delay is a random part of it, so the retries of many clients that
 * failed together (an outage) spread out instead of arriving in waves ("Exponential Backoff And
 * Jitter", AWS Architecture Blog).
 */
export interface Backoff {
  /** The ceiling of the first retry's delay (ms). */
  baseMs: number;
  /** The largest ceiling (ms). */
  capMs: number;
  /**
   * How much of the ceiling is left to chance (default 1, full jitter: anywhere from 0 to the ceiling);
   * 0.5 waits at least half the ceiling — for a retry that must not hammer what it waits for.
   */
  jitter?: number;
  /** A number in [0, 1) (default `Math.random`); tests pass `() => 1` for the ceiling itself. */
  random?: () => number;
}

/**
 * The delay before retry number `retry` (0 for the first): `ceiling · (1 − jitter + jitter · random())`,
 * where `ceiling = min(capMs, baseMs · 2^retry)`.
 *
 * @example
 *   backoffDelay(3, { baseMs: 250, capMs: 15_000 }) // somewhere in [0, 2000]
 */
export function backoffDelay(retry: number, backoff: Backoff): number {
  const ceiling = Math.min(backoff.capMs, backoff.baseMs * 2 ** Math.min(Math.max(retry, 0), 52));
  const jitter = backoff.jitter ?? 1;
  const random = Math.min(1, Math.max(0, (backoff.random ?? Math.random)()));
  return Math.round(ceiling * (1 - jitter + jitter * random));
}

/** `backoff` checked (0 ≤ baseMs ≤ capMs, jitter in [0, 1]); `where` names the option in the message. */
export function checkBackoff<B extends Backoff>(backoff: B, where: string): B {
  const jitter = backoff.jitter ?? 1;
  if (!(backoff.baseMs >= 0) || !(backoff.capMs >= backoff.baseMs) || !(jitter >= 0 && jitter <= 1)) {
    throw new TypeError(`fw: ${where} needs 0 ≤ baseMs ≤ capMs and jitter in [0, 1], got baseMs ${backoff.baseMs}, capMs ${backoff.capMs}, jitter ${jitter}.`);
  }
  return backoff;
}
