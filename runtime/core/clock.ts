/**
 * The runtime's time: what tokens are checked by, live streams opened with a token end by, scheduled
 * calls, crons and sleeping workflow runs fall due by. Tests inject a clock they move forward instead
 * of waiting for wall time; everything else uses {@link systemClock}.
 */
export interface Clock {
  /** Epoch ms. */
  now(): number;
  /** Calls `fn` once, when the clock reaches `time` (epoch ms); the returned function cancels it. */
  at(time: number, fn: () => void): () => void;
}

// setTimeout fires at once for delays above 2^31 - 1 ms (about 24.8 days): wait in steps.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Date.now() and setTimeout. */
export const systemClock: Clock = {
  now: () => Date.now(),
  at(time, fn) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      const delay = time - Date.now();
      timer = delay > MAX_TIMER_MS ? setTimeout(arm, MAX_TIMER_MS) : setTimeout(fn, Math.max(0, delay));
    };
    arm();
    return () => clearTimeout(timer);
  },
};
