import { describe, expect, it } from 'vitest';
import { FwError } from './errors.ts';
import type { LiveHandlers, LiveStatus, LiveSubscription } from './live.ts';
import { createLiveStore, type LiveSource } from './live-store.ts';

// The sharing and lifetime rules, with subscriptions the test drives by hand; the HTTP behaviour is
// covered in live.test.ts and react/react.test.tsx.
function controlledSource() {
  const opened: { handlers: LiveHandlers<unknown>; closed: boolean }[] = [];
  const source: LiveSource = {
    open(handlers) {
      const record = { handlers, closed: false };
      opened.push(record);
      const subscription: LiveSubscription = {
        close: () => void (record.closed = true),
        status: 'connecting' as LiveStatus,
        revision: undefined,
      };
      return subscription;
    },
  };
  return { source, opened };
}

const noop = () => {};
/**
 * A later turn of the event loop: the store closes a key at the end of the tick (a microtask), so by
 * then it has decided — no time passes, nothing is left to chance.
 */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('live store', () => {
  it('opens one subscription per key; StrictMode unsubscribe/resubscribe keeps it; the last leave closes it after the tick', async () => {
    const store = createLiveStore();
    const { source, opened } = controlledSource();
    const stopA = store.subscribe('k', source, noop);
    const stopB = store.subscribe('k', source, noop);
    stopA();
    stopB();
    const stopC = store.subscribe('k', source, noop);
    await nextTurn();
    expect(opened).toHaveLength(1);
    expect(opened[0]?.closed).toBe(false);

    stopC();
    expect(opened[0]?.closed).toBe(false);
    await nextTurn();
    expect(opened[0]?.closed).toBe(true);
    expect(store.getSnapshot('k')).toEqual({ data: undefined, error: undefined, status: 'connecting', revision: undefined });

    store.subscribe('k', source, noop);
    expect(opened).toHaveLength(2);
  });

  it('keeps data while reconnecting, clears the error when live again, and drops data on reset', () => {
    const store = createLiveStore();
    const { source, opened } = controlledSource();
    let notified = 0;
    store.subscribe('k', source, () => notified++);
    const initial = store.getSnapshot('k');
    expect(store.getSnapshot('k')).toBe(initial);
    const { handlers } = opened[0]!;

    handlers.onData(['a'], 3);
    handlers.onStatus?.('live');
    expect(store.getSnapshot('k')).toEqual({ data: ['a'], error: undefined, status: 'live', revision: 3 });
    const lost = new FwError({ code: 'network_error', status: 0, message: 'gone' });
    handlers.onStatus?.('reconnecting');
    handlers.onError?.(lost);
    expect(store.getSnapshot('k')).toEqual({ data: ['a'], error: lost, status: 'reconnecting', revision: 3 });
    handlers.onStatus?.('live');
    expect(store.getSnapshot('k')).toEqual({ data: ['a'], error: undefined, status: 'live', revision: 3 });

    const snapshot = store.getSnapshot('k');
    expect(store.getSnapshot('k')).toBe(snapshot);
    handlers.onReset?.();
    expect(store.getSnapshot('k')).toEqual({ data: undefined, error: undefined, status: 'live', revision: undefined });
    handlers.onData(['b'], 9);
    expect(store.getSnapshot('k')).toMatchObject({ data: ['b'], revision: 9 });
    expect(notified).toBe(7);
  });

  it('retry reopens a subscription the server ended: connecting, the error kept until live; the ended one is closed and ignored', () => {
    const store = createLiveStore();
    const { source, opened } = controlledSource();
    let notified = 0;
    store.subscribe('k', source, () => notified++);
    const forbidden = new FwError({ code: 'forbidden', status: 403, message: 'no' });
    const first = opened[0]!.handlers;
    first.onError?.(forbidden);
    first.onStatus?.('closed');
    expect(store.getSnapshot('k')).toEqual({ data: undefined, error: forbidden, status: 'closed', revision: undefined });

    store.retry('k');
    expect(opened).toHaveLength(2);
    expect(opened[0]?.closed).toBe(true);
    expect(store.getSnapshot('k')).toEqual({ data: undefined, error: forbidden, status: 'connecting', revision: undefined });
    // The ended subscription's late callbacks no longer count.
    first.onData(['stale'], 1);
    first.onStatus?.('closed');
    expect(store.getSnapshot('k').status).toBe('connecting');

    const second = opened[1]!.handlers;
    second.onData(['a'], 4);
    second.onStatus?.('live');
    expect(store.getSnapshot('k')).toEqual({ data: ['a'], error: undefined, status: 'live', revision: 4 });
    expect(notified).toBe(5);

    // Open (live, connecting, reconnecting): retry leaves it alone; a key no one follows is not opened.
    store.retry('k');
    store.retry('other');
    expect(opened).toHaveLength(2);
    expect(opened[1]?.closed).toBe(false);
  });

  it('a new subscriber reopens an ended key; under StrictMode the second subscribe shares the reopened one', async () => {
    const store = createLiveStore();
    const { source, opened } = controlledSource();
    const stopA = store.subscribe('k', source, noop);
    opened[0]!.handlers.onError?.(new FwError({ code: 'forbidden', status: 403, message: 'no' }));
    opened[0]!.handlers.onStatus?.('closed');

    // A remount while another component still holds the ended key (so it was not dropped).
    const stopB = store.subscribe('k', source, noop);
    stopB();
    const stopC = store.subscribe('k', source, noop);
    expect(opened).toHaveLength(2);
    expect(opened[0]?.closed).toBe(true);
    expect(store.getSnapshot('k').status).toBe('connecting');

    // A live key is shared, not reopened.
    opened[1]!.handlers.onStatus?.('live');
    const stopD = store.subscribe('k', source, noop);
    expect(opened).toHaveLength(2);

    stopA();
    stopC();
    stopD();
    await nextTurn();
    expect(opened[1]?.closed).toBe(true);
  });
});
