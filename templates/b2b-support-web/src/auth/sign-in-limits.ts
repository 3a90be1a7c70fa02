/**
 * How many wrong passwords an email of a workspace may have in a window before sign-in stops trying
 * them: a password guesser gets ten tries per quarter of an hour, not thousands per second (and each
 * try costs the server a key derivation). The counts live in the database (sign_in_failures), so every
 * server process shares them. A right password clears them.
 */
export const MAX_FAILED_SIGN_INS = 10;
export const FAILED_SIGN_IN_WINDOW_MS = 15 * 60_000;

/** Whole seconds until the oldest failure of a full window leaves it (at least 1). */
export function secondsUntilRetry(oldestFailure: Date, now: Date): number {
  return Math.max(1, Math.ceil((oldestFailure.getTime() + FAILED_SIGN_IN_WINDOW_MS - now.getTime()) / 1000));
}
