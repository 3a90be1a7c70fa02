import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
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

describe('query store', () => {
  it('shares one load between subscribers; a resubscribe while loading (StrictMode) joins it', async () => {
    const store = createQueryStore();
    const { source, loads } = controlledSource(['notes']);
    const stopA = store.subscribe('k', source, noop);
    const stopB = store.subscribe('k', source, noop);
    stopA();
    stopB();
    store.subscribe('k', source, noop);
    expect(loads).toHaveLength(1);
    loads[0]!.resolve(['a']);
    await Promise.resolve();
    expect(store.getSnapshot('k')).toEqual({ data: ['a'], error: undefined, isLoading: false });
  });

  it('notifies subscribers once per change and keeps the snapshot identity otherwise', async () => {
    const store = createQueryStore();
    const { source, loads } = controlledSource(['notes']);
    let notified = 0;
    store.subscribe('k', source, () => notified++);
    const loading = store.getSnapshot('k');
    expect(store.getSnapshot('k')).toBe(loading);
    loads[0]!.resolve(1);
    await Promise.resolve();
    expect(notified).toBe(1);
    expect(store.getSnapshot('k')).toBe(store.getSnapshot('k'));
  });

  it('lets the newest load win when an older one finishes last', async () => {
    const store = createQueryStore();
    const { source, loads } = controlledSource(['notes']);
    store.subscribe('k', source, noop);
    const reloaded = store.invalidate(['notes']);
    expect(loads).toHaveLength(2);
    expect(loads[0]!.signal.aborted).toBe(true);
    loads[1]!.resolve('after the write');
    await reloaded;
    loads[0]!.resolve('before the write');
    await Promise.resolve();
    expect(store.getSnapshot('k').data).toBe('after the write');
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
    loads[0]!.resolve('first');
    await Promise.resolve();
    const refetched = store.refetch('k');
    expect(store.refetch('k')).toBe(refetched);
    const cause = new Error('offline');
    loads[1]!.reject(cause);
    await refetched;
    const { data, error, isLoading } = store.getSnapshot('k');
    expect({ data, isLoading }).toEqual({ data: 'first', isLoading: false });
    expect(error).toBeInstanceOf(FwError);
    expect(error).toMatchObject({ code: 'client_error', cause });
  });

  it('drops an entry gcTime after its last subscriber left, aborting its load', async () => {
    const store = createQueryStore({ gcTime: 10 });
    const { source, loads } = controlledSource(['notes']);
    store.subscribe('k', source, noop)();
    await sleep(30);
    expect(loads[0]!.signal.aborted).toBe(true);
    store.subscribe('k', source, noop);
    expect(loads).toHaveLength(2);
    expect(store.getSnapshot('k').isLoading).toBe(true);
  });
});
