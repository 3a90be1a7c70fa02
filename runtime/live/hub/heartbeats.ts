/**
 * Heartbeats: a comment on every stream that was quiet for `heartbeatMs`, so proxies do not close it.
 * The streams are visited a slice at a time, each once per half interval, not all in one turn: with
 * thousands of quiet streams one sweep is thousands of socket writes, and every frame that waits behind
 * them is late by that much (bench/live's p99). A stream is visited every `heartbeatMs / 2`, so none is
 * quiet for longer than 1.5 × `heartbeatMs`, as before.
 */
import type { LiveConnection } from '../live-connection.ts';

/** The longest pause between two slices of a sweep. */
const SLICE_MS = 250;

export function startHeartbeats(connections: ReadonlySet<LiveConnection>, heartbeatMs: number): ReturnType<typeof setInterval> {
  const sweepMs = Math.max(50, Math.floor(heartbeatMs / 2));
  const sliceMs = Math.min(SLICE_MS, sweepMs);
  const slicesPerSweep = Math.max(1, Math.floor(sweepMs / sliceMs));
  // A Set's iterator stays valid while streams open and close: it visits what is there when it gets there.
  let sweep: Iterator<LiveConnection> | undefined;
  let left = 0;
  const timer = setInterval(() => {
    if (!sweep) {
      sweep = connections.values();
      left = slicesPerSweep;
    }
    // An even share of what the sweep has yet to visit; the last slice takes the rest.
    let quota = left <= 1 ? Infinity : Math.ceil(connections.size / slicesPerSweep);
    left--;
    while (quota-- > 0) {
      const next = sweep.next();
      if (next.done) {
        sweep = undefined;
        return;
      }
      next.value.heartbeat(heartbeatMs);
    }
    if (left <= 0) sweep = undefined;
  }, sliceMs);
  timer.unref();
  return timer;
}
