import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../runtime/core/canonical-json.ts';
import { FwError } from './errors.ts';
import type { LiveHandlers, LiveStatus } from './live.ts';
import { createLiveStore } from './live-store.ts';
import { createPaginatedLive, type PageArgs, type PageResult } from './paginated-live.ts';

// The page logic over a real live store, with subscriptions the test answers by hand: which pages are
// open with which bounds, when a page is held by its end, and how an invalid cursor starts over.
function harness(pageSize = 2) {
  const liveStore = createLiveStore();
  const open = new Map<string, { page: PageArgs; handlers: LiveHandlers<unknown>; closed: boolean }>();
  const pages = createPaginatedLive<{ n: number }>({
    liveStore,
    args: { list: 1 },
    pageSize,
    keyOf: (args) => canonicalJson(args),
    sourceOf: (args) => ({
      open(handlers) {
        const record = { page: args.page as PageArgs, handlers, closed: false };
        open.set(canonicalJson(args.page), record);
        return { close: () => void (record.closed = true), status: 'connecting' as LiveStatus, revision: undefined };
      },
    }),
  });
  const answer = (page: PageArgs, result: PageResult<{ n: number }>) => {
    const record = open.get(canonicalJson(page));
    if (!record) throw new Error(`no subscription for ${canonicalJson(page)}; open: ${[...open.keys()].join(' | ')}`);
    record.handlers.onData(result, 1);
  };
  const openPages = () => [...open.entries()].filter(([, record]) => !record.closed).map(([key]) => key);
  const rows = (...ns: number[]) => ns.map((n) => ({ n }));
  return { pages, answer, open, openPages, rows };
}
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('paginated live', () => {
  it('holds a page by its end once it has one, and opens the next page exactly there', async () => {
    const { pages, answer, openPages, rows } = harness();
    const seen: string[] = [];
    const stop = pages.subscribe(() => seen.push(pages.getSnapshot().status));
    expect(pages.getSnapshot().status).toBe('loadingFirstPage');
    expect(pages.loadMore()).toBe(false); // nothing to continue from yet
    answer({ cursor: null, numItems: 2 }, { page: rows(9, 8), isDone: false, continueCursor: 'c8' });
    expect(pages.getSnapshot()).toMatchObject({ results: rows(9, 8), status: 'canLoadMore', isDone: false });
    // Held by its end at once: a row inserted before it grows the page instead of pushing 8 out of view.
    expect(openPages()).toEqual(['{"cursor":null,"numItems":2}', '{"cursor":null,"endCursor":"c8","numItems":2}']);

    expect(pages.loadMore()).toBe(true);
    expect(pages.loadMore()).toBe(false); // the new page is still loading
    expect(openPages()).toEqual(['{"cursor":null,"numItems":2}', '{"cursor":null,"endCursor":"c8","numItems":2}', '{"cursor":"c8","numItems":2}']);
    // Until the held page answers, the first page shows what it had: no flash, no gap.
    expect(pages.getSnapshot()).toMatchObject({ results: rows(9, 8), status: 'loadingMore' });
    answer({ cursor: 'c8', numItems: 2 }, { page: rows(7, 6), isDone: false, continueCursor: 'c6' });
    expect(pages.getSnapshot().results).toEqual(rows(9, 8, 7, 6));
    // A row inserted at the top: the held page grows (its bounds are fixed), the next does not change.
    answer({ cursor: null, numItems: 2, endCursor: 'c8' }, { page: rows(10, 9, 8), isDone: false, continueCursor: 'c8' });
    await nextTurn();
    expect(openPages()).toEqual(['{"cursor":null,"endCursor":"c8","numItems":2}', '{"cursor":"c8","numItems":2}', '{"cursor":"c8","endCursor":"c6","numItems":2}']);
    expect(pages.getSnapshot()).toMatchObject({ results: rows(10, 9, 8, 7, 6), status: 'canLoadMore' });

    expect(pages.loadMore(5)).toBe(true);
    answer({ cursor: 'c6', numItems: 5 }, { page: rows(5), isDone: true, continueCursor: 'c5' });
    answer({ cursor: 'c8', numItems: 2, endCursor: 'c6' }, { page: rows(7, 6), isDone: false, continueCursor: 'c6' });
    expect(pages.getSnapshot()).toMatchObject({ results: rows(10, 9, 8, 7, 6, 5), status: 'exhausted', isDone: true });
    expect(pages.loadMore()).toBe(false);
    // The last page, with nothing after it, stays open-ended: a row added at the end shows.
    answer({ cursor: 'c6', numItems: 5 }, { page: rows(5, 4), isDone: true, continueCursor: 'c4' });
    expect(pages.getSnapshot().results).toEqual(rows(10, 9, 8, 7, 6, 5, 4));
    await nextTurn(); // listeners are told after the turn (once per settled change)

    stop();
    await nextTurn();
    expect(openPages()).toEqual([]);
    expect(seen.at(-1)).toBe('exhausted');
  });

  it('notifies once per settled change: a row moved between two pages whose snapshots land in one turn is never seen twice', async () => {
    const { pages, answer, rows } = harness();
    const seen: number[][] = [];
    const stop = pages.subscribe(() => seen.push(pages.getSnapshot().results.map((row) => row.n)));
    answer({ cursor: null, numItems: 2 }, { page: rows(9, 8), isDone: false, continueCursor: 'c8' });
    answer({ cursor: null, numItems: 2, endCursor: 'c8' }, { page: rows(9, 8), isDone: false, continueCursor: 'c8' });
    expect(pages.loadMore()).toBe(true);
    answer({ cursor: 'c8', numItems: 2 }, { page: rows(7, 6), isDone: true, continueCursor: 'c6' });
    await nextTurn();
    expect(seen.at(-1)).toEqual([9, 8, 7, 6]);
    seen.length = 0;
    // 9 moves to the end: one chunk of the stream carries both pages' snapshots, handled in one turn
    // (the second page's first, as the server may send them).
    answer({ cursor: 'c8', numItems: 2 }, { page: rows(7, 6, 9), isDone: true, continueCursor: 'c9' });
    answer({ cursor: null, numItems: 2, endCursor: 'c8' }, { page: rows(8), isDone: false, continueCursor: 'c8' });
    await nextTurn();
    expect(seen).toEqual([[8, 7, 6, 9]]);
    stop();
  });

  it('an invalid_cursor starts over from the first page (kept live: it shows at once) and closes the others', async () => {
    const { pages, answer, open, openPages, rows } = harness();
    const stop = pages.subscribe(() => {});
    answer({ cursor: null, numItems: 2 }, { page: rows(9, 8), isDone: false, continueCursor: 'c8' });
    pages.loadMore();
    const failure = new FwError({ code: 'invalid_cursor', status: 400, message: 'The cursor belongs to other args or another order.' });
    open.get('{"cursor":"c8","numItems":2}')!.handlers.onError?.(failure);
    await nextTurn();
    expect(pages.getSnapshot()).toMatchObject({ results: rows(9, 8), status: 'canLoadMore', error: undefined });
    expect(openPages()).toEqual(['{"cursor":null,"numItems":2}', '{"cursor":null,"endCursor":"c8","numItems":2}']);
    answer({ cursor: null, numItems: 2, endCursor: 'c8' }, { page: rows(9, 8), isDone: false, continueCursor: 'c8' });
    expect(pages.getSnapshot()).toMatchObject({ results: rows(9, 8), status: 'canLoadMore', error: undefined });
    stop();
  });

  it('an invalid_cursor before any page loaded is shown while the first page loads', async () => {
    const { pages, answer, open, rows } = harness();
    const stop = pages.subscribe(() => {});
    const failure = new FwError({ code: 'invalid_cursor', status: 400, message: 'The cursor is malformed.' });
    open.get('{"cursor":null,"numItems":2}')!.handlers.onError?.(failure);
    expect(pages.getSnapshot()).toMatchObject({ results: [], status: 'loadingFirstPage', error: failure });
    answer({ cursor: null, numItems: 2 }, { page: rows(1), isDone: true, continueCursor: 'c1' });
    expect(pages.getSnapshot()).toMatchObject({ results: rows(1), status: 'exhausted', error: undefined });
    stop();
  });

  it('retry reopens a first page the server refused; nothing while it is open', () => {
    const { pages, answer, open, rows } = harness();
    const stop = pages.subscribe(() => {});
    const first = open.get('{"cursor":null,"numItems":2}')!;
    const forbidden = new FwError({ code: 'forbidden', status: 403, message: 'no' });
    first.handlers.onError?.(forbidden);
    first.handlers.onStatus?.('closed');
    expect(pages.getSnapshot()).toMatchObject({ results: [], status: 'loadingFirstPage', error: forbidden, liveStatus: 'closed' });

    pages.retry();
    const reopened = open.get('{"cursor":null,"numItems":2}')!;
    expect(reopened).not.toBe(first);
    expect(first.closed).toBe(true);
    expect(pages.getSnapshot()).toMatchObject({ status: 'loadingFirstPage', liveStatus: 'connecting' });
    answer({ cursor: null, numItems: 2 }, { page: rows(1), isDone: true, continueCursor: 'c1' });
    reopened.handlers.onStatus?.('live');
    expect(pages.getSnapshot()).toMatchObject({ results: rows(1), status: 'exhausted', error: undefined, liveStatus: 'live' });

    pages.retry();
    expect(open.get('{"cursor":null,"numItems":2}')).toBe(reopened);
    expect(reopened.closed).toBe(false);
    stop();
  });
});

