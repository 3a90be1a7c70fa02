import { describe, expect, it } from 'vitest';
import type { ApiShape, EntryRef } from './api-types.ts';
import type { LiveHandlers, LiveStatus } from './live.ts';
import { createLiveStore } from './live-store.ts';
import { applyOptimistic } from './optimistic.ts';
import { createQueryStore } from './query-store.ts';

// The layer logic over real live and query stores, with server answers the test gives by hand: what
// a subscriber sees after every single update (so a flash of the old state would show), in call order.
type Note = { title: string };
const api = {
  commands: {},
  queries: { listNotes: { kind: 'query', name: 'listNotes', reads: ['notes'], writes: [] } as EntryRef<'query'> },
  liveQueries: {
    liveNotes: { kind: 'liveQuery', name: 'liveNotes', reads: ['notes'], writes: [] } as EntryRef<'liveQuery'>,
    pages: { kind: 'liveQuery', name: 'pages', reads: ['notes'], writes: [] } as EntryRef<'liveQuery'>,
  },
} satisfies ApiShape;
const identity = 'me';
const key = (name: string, args: string) => `${identity}\u0000${name}\u0000${args}`;
const notesKey = key('liveNotes', '{}');

function harness(settleMs = 3000) {
  const liveStore = createLiveStore();
  const store = createQueryStore();
  const handlers = new Map<string, LiveHandlers<unknown>>();
  const source = (k: string) => ({
    open(h: LiveHandlers<unknown>) {
      handlers.set(k, h);
      return { close: () => {}, status: 'live' as LiveStatus, revision: undefined };
    },
  });
  /** Every title list a subscriber of liveNotes saw, one per update. */
  const seen: string[] = [];
  liveStore.subscribe(notesKey, source(notesKey), () => seen.push(titles(liveStore.getSnapshot(notesKey).data)));
  const frame = (data: Note[], revision: number, k = notesKey, covers?: number[]) => handlers.get(k)!.onData(data, revision, covers);
  const targets = { api, identity, liveStore, store, settleMs };
  const add = (title: string) =>
    applyOptimistic<typeof api, { title: string }>(targets, (local, args) => local.setLive('liveNotes', {} as never, ((notes: Note[]) => [...notes, { title: args.title }]) as never), { title });
  return { liveStore, store, frame, seen, add, source, targets, handlers };
}
const titles = (data: unknown) => (data === undefined ? '-' : (data as Note[]).map((note) => note.title).join(','));
const notes = (...list: string[]) => list.map((title) => ({ title }));

describe('optimistic layers', () => {
  it('apply at once and roll back when the command fails (showing what arrived meanwhile)', () => {
    const { frame, seen, add, liveStore } = harness();
    frame(notes('a'), 10);
    const layer = add('b');
    expect(titles(liveStore.getSnapshot(notesKey).data)).toBe('a,b');
    frame(notes('a', 'x'), 11);
    layer.rollback();
    expect(seen).toEqual(['a', 'a,b', 'a,x']);
  });

  it('two commands in flight: layers in call order over every new server result; each goes with the snapshot carrying its revision', () => {
    const { frame, seen, add } = harness();
    frame(notes('a'), 10);
    const first = add('b');
    const second = add('c');
    // Another tab's write, while both are in flight: held until they answer, then the server's data is
    // replaced and both layers re-applied on top.
    frame(notes('a', 'x'), 11);
    first.succeeded([12]);
    expect(seen.at(-1)).toBe('a,b,c');
    second.succeeded([13]);
    expect(seen.at(-1)).toBe('a,x,b,c');
    // The snapshot with the first command's write: its layer goes in the same update, the second stays.
    frame(notes('a', 'x', 'b'), 12);
    frame(notes('a', 'x', 'b', 'c'), 13);
    expect(seen).toEqual(['a', 'a,b', 'a,b,c', 'a,x,b,c', 'a,x,b,c', 'a,x,b,c']);
  });

  it('a snapshot with the first command\'s write, replaced while held by a later one, still settles its layer', () => {
    const { frame, seen, add } = harness();
    frame(notes('a'), 10);
    const alpha = add('alpha');
    const beta = add('beta');
    beta.succeeded([12]);
    frame(notes('a', 'beta'), 12); // held: alpha has not answered
    frame(notes('a', 'beta', 'alpha'), 13); // replaces the held one
    alpha.succeeded([13]);
    expect(seen).toEqual(['a', 'a,alpha', 'a,alpha,beta', 'a,beta,alpha']);
  });

  it('a snapshot that came before the answer is held until it, then settles the layer in the same update', () => {
    const { frame, seen, add } = harness();
    frame(notes('a'), 10);
    const layer = add('b');
    // The rerun beat the HTTP answer: held until the answer says it includes the write (shown at once,
    // the note would show twice — data plus layer — in between), then shown with the layer gone.
    frame(notes('a', 'b'), 14);
    expect(seen).toEqual(['a', 'a,b']);
    layer.succeeded([14, 15]);
    expect(seen).toEqual(['a', 'a,b', 'a,b']);
  });

  it('a later snapshot without the revision keeps the layer; a result the write never reruns is released after settleMs', async () => {
    const { frame, seen, add } = harness(30);
    frame(notes('a'), 10);
    const layer = add('b');
    layer.succeeded([20]);
    frame(notes('a', 'y'), 19); // an older run: does not include the write
    expect(seen.at(-1)).toBe('a,y,b');
    const deadline = Date.now() + 10_000;
    while (seen.at(-1) !== 'a,y' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(seen).toEqual(['a', 'a,b', 'a,y,b', 'a,y']);
  });

  it('a snapshot labelled with a later revision that covers the write settles the layer in the same update (never shown twice)', () => {
    const { frame, seen, add } = harness(600_000);
    frame(notes('a'), 10);
    const layer = add('b');
    layer.succeeded([20]);
    // One rerun read the write with a later one (another tab's x): labelled 21, it covers both.
    frame(notes('a', 'b', 'x'), 21, notesKey, [20, 21]);
    expect(seen).toEqual(['a', 'a,b', 'a,b,x']);
  });

  it('a command that does not answer holds snapshots for settleMs at most, then they show under the layer', async () => {
    const { frame, seen, add } = harness(30);
    frame(notes('a'), 10);
    const layer = add('b');
    frame(notes('a', 'x'), 11);
    expect(seen).toEqual(['a', 'a,b']);
    const deadline = Date.now() + 10_000;
    while (seen.at(-1) !== 'a,x,b' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(seen).toEqual(['a', 'a,b', 'a,x,b']);
    layer.rollback();
    expect(seen.at(-1)).toBe('a,x');
  });

  it('a command that wrote nothing (or a runtime without live queries) drops its live layers at once', () => {
    const { frame, seen, add } = harness();
    frame(notes('a'), 10);
    add('b').succeeded([]);
    expect(seen).toEqual(['a', 'a,b', 'a']);
  });

  it('results not loaded are not changed, and a throwing update does not stop the command', () => {
    const { targets, liveStore } = harness();
    const layer = applyOptimistic<typeof api, {}>(targets, (local) => {
      expect(local.getLive('liveNotes', { other: 1 } as never)).toBeUndefined();
      local.setLive('liveNotes', { other: 1 } as never, [] as never);
      throw new Error('boom');
    }, {});
    expect(liveStore.keys()).toEqual([notesKey]);
    layer.rollback();
  });

  it('query layers go with the reload invalidate starts, in the same update as its data', async () => {
    const { store, targets } = harness();
    const listKey = key('listNotes', '{}');
    let answer: (value: Note[]) => void = () => {};
    const seen: string[] = [];
    store.subscribe(listKey, { reads: ['notes'], load: () => new Promise<Note[]>((resolve) => (answer = resolve)) }, () => seen.push(titles(store.getSnapshot(listKey).data)));
    answer(notes('a'));
    await Promise.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    const layer = applyOptimistic<typeof api, {}>(targets, (local) => local.setQuery('listNotes', {} as never, ((list: Note[]) => [...list, { title: 'b' }]) as never), {});
    layer.succeeded([1]);
    layer.settleQueries();
    const invalidated = store.invalidate(['notes']);
    answer(notes('a', 'b'));
    await invalidated;
    layer.settled();
    expect(seen).toEqual(['a', 'a,b', 'a,b']);
  });

  it('setPages changes every loaded page of a paginated liveQuery, told which page it is', () => {
    const { liveStore, source, handlers, targets } = harness();
    const first = key('pages', '{"list":1,"page":{"cursor":null,"endCursor":"c2","numItems":2}}');
    const second = key('pages', '{"list":1,"page":{"cursor":"c2","numItems":2}}');
    const other = key('pages', '{"list":2,"page":{"cursor":null,"numItems":2}}');
    for (const k of [first, second, other]) liveStore.subscribe(k, source(k), () => {});
    handlers.get(first)!.onData({ page: notes('a', 'b'), isDone: false, continueCursor: 'c2' }, 1);
    handlers.get(second)!.onData({ page: notes('c'), isDone: true, continueCursor: 'c3' }, 1);
    handlers.get(other)!.onData({ page: notes('z'), isDone: true, continueCursor: 'cz' }, 1);
    applyOptimistic<typeof api, {}>(targets, (local) =>
      local.setPages('pages', { list: 1 } as never, (rows, { page }) => (page.cursor === null ? [{ title: 'new' }, ...(rows as Note[])] : rows) as never),
    {});
    const rowsOf = (k: string) => titles((liveStore.getSnapshot(k).data as { page: Note[] }).page);
    expect([rowsOf(first), rowsOf(second), rowsOf(other)]).toEqual(['new,a,b', 'c', 'z']);
  });
});
