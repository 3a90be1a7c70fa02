import { afterEach, describe, expect, it, vi } from 'vitest';
import { FwError } from './errors.ts';
import { createQueryStore, type QuerySource } from './query-store.ts';

// The races live here, with loads the test settles by hand; the HTTP behaviour is covered in react/react.test.tsx.
function controlledSource(reads: readonly string[]) {
  const loads: { resolve(value: unknown): void; reject(error: unknown): void; signal: AbortSignal }[] = [];
  const source: QuerySource = {
    reads,
    load: (signal) => new Promise((resolve, reject) => loads.push({ resolve, reject, signal })),
  };
  return { source, loads };
}

const noop = () => {};
/**
 * A later turn of the event loop. The loads here are settled by hand, with no I/O: by then every
 * reaction to a settled load has run, whatever chain of promises the store builds on it.
 */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('query store', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('shares one load between subscribers; a resubscribe while loading (StrictMode) joins it', async () => {
    const store = createQueryStore();
    const { source, loads } = controlledSource(['notes']);
    const stopA = store.subscribe('k', source, noop);
    const stopB = store.subscribe('k', source, noop);
    stopA();
    stopB();
    store.subscribe('k', source, noop);
    expect(loads).toHaveLength(1);
    // refetch joins the load in flight: it resolves once that load has settled.
    const settled = store.refetch('k');
    expect(loads).toHaveLength(1);
    loads[0]!.resolve(['a']);
    await settled;
    expect(store.getSnapshot('k')).toEqual({ data: ['a'], error: undefined, isLoading: false });
  });

  it('notifies subscribers once per change and keeps the snapshot identity otherwise', async () => {
    const store = createQueryStore();
    const { source, loads } = controlledSource(['notes']);
    let notified = 0;
    store.subscribe('k', source, () => notified++);
    const loading = store.getSnapshot('k');
    expect(store.getSnapshot('k')).toBe(loading);
    const settled = store.refetch('k');
    loads[0]!.resolve(1);
    await settled;
    expect(notified).toBe(1);
    expect(store.getSnapshot('k')).toBe(store.getSnapshot('k'));
    expect(store.getSnapshot('k')).toEqual({ data: 1, error: undefined, isLoading: false });
  });

  it('lets the newest load win when an older one finishes last', async () => {
    const store = createQueryStore();
    const { source, loads } = controlledSource(['notes']);
    let notified = 0;
    store.subscribe('k', source, () => notified++);
    const reloaded = store.invalidate(['notes']);
    expect(loads).toHaveLength(2);
    expect(loads[0]!.signal.aborted).toBe(true);
    loads[1]!.resolve('after the write');
    await reloaded;
    const newest = store.getSnapshot('k');
    expect(newest.data).toBe('after the write');
    loads[0]!.resolve('before the write');
    await nextTurn();
    // The stale answer was handled and dropped: same snapshot, nobody told.
    expect(store.getSnapshot('k')).toBe(newest);
    expect(notified).toBe(1);
  });

  it('reloads only watched entries that read a written table, and drops unwatched loads in flight', async () => {
    const store = createQueryStore();
    const notes = controlledSource(['notes']);
    const tags = controlledSource(['tags']);
    const unwatched = controlledSource(['notes']);
    store.subscribe('notes', notes.source, noop);
    store.subscribe('tags', tags.source, noop);
    store.subscribe('unwatched', unwatched.source, noop)();
    void store.invalidate(['notes', 'users']);
    expect([notes.loads.length, tags.loads.length, unwatched.loads.length]).toEqual([2, 1, 1]);
    expect(unwatched.loads[0]!.signal.aborted).toBe(true);
    // Its next subscriber loads afresh instead of joining a read that may predate the write.
    store.subscribe('unwatched', unwatched.source, noop);
    expect(unwatched.loads).toHaveLength(2);
  });

  it('turns a failed load into an FwError and keeps the last data', async () => {
    const store = createQueryStore();
    const { source, loads } = controlledSource(['notes']);
    store.subscribe('k', source, noop);
    const loaded = store.refetch('k');
    loads[0]!.resolve('first');
    await loaded;
    const refetched = store.refetch('k');
    expect(loads).toHaveLength(2);
    expect(store.refetch('k')).toBe(refetched);
    const cause = new Error('offline');
    loads[1]!.reject(cause);
    await refetched;
    const { data, error, isLoading } = store.getSnapshot('k');
    expect({ data, isLoading }).toEqual({ data: 'first', isLoading: false });
    expect(error).toBeInstanceOf(FwError);
    expect(error).toMatchObject({ code: 'client_error', cause });
  });

  it('drops an entry gcTime after its last subscriber left, aborting its load', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const store = createQueryStore({ gcTime: 10 });
    const { source, loads } = controlledSource(['notes']);
    store.subscribe('k', source, noop)();
    vi.advanceTimersByTime(9);
    expect(loads[0]!.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(loads[0]!.signal.aborted).toBe(true);
    store.subscribe('k', source, noop);
    expect(loads).toHaveLength(2);
    expect(store.getSnapshot('k').isLoading).toBe(true);
  });

  it('keeps an entry whose subscriber comes back within gcTime', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const store = createQueryStore({ gcTime: 10 });
    const { source, loads } = controlledSource(['notes']);
    store.subscribe('k', source, noop)();
    vi.advanceTimersByTime(9);
    store.subscribe('k', source, noop);
    vi.advanceTimersByTime(60_000);
    expect(loads).toHaveLength(1);
    expect(loads[0]!.signal.aborted).toBe(false);
  });
});
