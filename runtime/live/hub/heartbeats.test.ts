import { afterEach, describe, expect, it } from 'vitest';
import type { SseConnection } from '../sse-connection.ts';
import { startHeartbeats } from './heartbeats.ts';
import { until } from '../../../e2e/support/until.ts';

describe('heartbeats', () => {
  let timer: ReturnType<typeof setInterval> | undefined;
  let turns: ReturnType<typeof setImmediate> | undefined;
  afterEach(() => {
    clearInterval(timer);
    clearImmediate(turns);
  });

  it('visits every stream once a sweep, a slice per timer turn, never all of them in one turn', async () => {
    // Which turn of the event loop each visit came in: one slice is one synchronous timer callback.
    let turn = 0;
    const tick = () => {
      turn++;
      turns = setImmediate(tick);
    };
    tick();
    const visits = new Map<number, number[]>();
    const connections = new Set<SseConnection>();
    for (let i = 0; i < 100; i++) {
      connections.add({ heartbeat: (quietMs: number) => {
        expect(quietMs).toBe(2000);
        visits.set(i, [...(visits.get(i) ?? []), turn]);
      } } as unknown as SseConnection);
    }
    // 2 s of quiet: a sweep every second, in four slices of 250 ms.
    timer = startHeartbeats(connections, 2000);
    await until(async () => visits.size === 100, 'every stream visited once');
    const perTurn = new Map<number, number>();
    for (const [first] of visits.values()) perTurn.set(first!, (perTurn.get(first!) ?? 0) + 1);
    expect([...perTurn.values()].sort((a, b) => a - b)).toEqual([25, 25, 25, 25]);
  });
});
