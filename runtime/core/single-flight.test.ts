import { describe, expect, it } from 'vitest';
import { createSingleFlight } from './single-flight.ts';

/** A run the test finishes by hand: every run of the flight under test is one of these. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((yes, no) => ((resolve = yes), (reject = no)));
  return { promise, resolve, reject };
}

/** A flight whose runs wait for the test: `runs[i]` is the i-th run, started when it appears. */
function controlled<T = number>() {
  const runs: Array<ReturnType<typeof deferred<T>>> = [];
  const errors: unknown[] = [];
  const flight = createSingleFlight(
    () => {
      const run = deferred<T>();
      runs.push(run);
      return run.promise;
    },
    { onError: (error) => errors.push(error) },
  );
  return { flight, runs, errors };
}

/** Lets the flight's loop move on after a run settles (promise reactions only; no timers). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe('createSingleFlight', () => {
  it('runs at once when idle, synchronously', () => {
    const { flight, runs } = controlled();
    void flight.wake();
    expect(runs).toHaveLength(1);
    expect(flight.busy).toBe(true);
  });

  it('folds every wakeup during a run into exactly one follow-up run', async () => {
    const { flight, runs } = controlled();
    const first = flight.wake();
    const during = [flight.wake(), flight.wake(), flight.wake()];
    expect(runs).toHaveLength(1);
    runs[0]!.resolve(1);
    expect(await first).toBe(1);
    await settle();
    expect(runs).toHaveLength(2);
    runs[1]!.resolve(2);
    // Each wakeup gets the result of the run that began after it.
    expect(await Promise.all(during)).toEqual([2, 2, 2]);
    await flight.idle();
    expect(runs).toHaveLength(2);
    expect(flight.busy).toBe(false);
  });

  it('a wakeup during the follow-up gets one more run, and none after it', async () => {
    const { flight, runs } = controlled();
    void flight.wake();
    void flight.wake();
    runs[0]!.resolve(1);
    await settle();
    const late = flight.wake();
    runs[1]!.resolve(2);
    await settle();
    expect(runs).toHaveLength(3);
    runs[2]!.resolve(3);
    expect(await late).toBe(3);
    await flight.idle();
    expect(runs).toHaveLength(3);
  });

  it('a wakeup after the loop ended starts a new one (no lost run)', async () => {
    const { flight, runs } = controlled();
    void flight.wake();
    runs[0]!.resolve(1);
    await flight.idle();
    expect(flight.busy).toBe(false);
    const again = flight.wake();
    expect(runs).toHaveLength(2);
    runs[1]!.resolve(2);
    expect(await again).toBe(2);
  });

  it('a failed run rejects the wakeups it covered, is reported, and the follow-up still runs', async () => {
    const { flight, runs, errors } = controlled();
    const failing = flight.wake();
    const during = flight.wake();
    const boom = new Error('boom');
    runs[0]!.reject(boom);
    await expect(failing).rejects.toBe(boom);
    expect(errors).toEqual([boom]);
    await settle();
    expect(runs).toHaveLength(2);
    runs[1]!.resolve(2);
    expect(await during).toBe(2);
    await flight.idle();
    expect(runs).toHaveLength(2);
  });

  it('a run that throws synchronously fails like one that rejects', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const flight = createSingleFlight<number>(
      () => {
        calls++;
        throw new Error('sync');
      },
      { onError: (error) => errors.push(error) },
    );
    await expect(flight.wake()).rejects.toThrow('sync');
    await flight.idle();
    expect(calls).toBe(1);
    expect(errors).toHaveLength(1);
  });

  it('close drops the due follow-up, waits for the run in flight, and refuses later wakeups', async () => {
    const { flight, runs } = controlled();
    const first = flight.wake();
    const dropped = flight.wake();
    let closed = false;
    const closing = flight.close().then(() => (closed = true));
    await settle();
    expect(closed).toBe(false);
    runs[0]!.resolve(1);
    expect(await first).toBe(1);
    await closing;
    await expect(dropped).rejects.toThrow(/closed/);
    await expect(flight.wake()).rejects.toThrow(/closed/);
    expect(runs).toHaveLength(1);
    expect(flight.closed).toBe(true);
    expect(flight.busy).toBe(false);
  });

  it('idle resolves at once when nothing runs, and after the last follow-up otherwise', async () => {
    const { flight, runs } = controlled();
    await flight.idle();
    void flight.wake();
    void flight.wake();
    let idle = false;
    const waiting = flight.idle().then(() => (idle = true));
    runs[0]!.resolve(1);
    await settle();
    expect(idle).toBe(false);
    runs[1]!.resolve(2);
    await waiting;
    expect(idle).toBe(true);
  });
});
