import type { FwError } from './errors.ts';
import type { LiveStatus } from './live.ts';
import type { LiveSource, LiveStore } from './live-store.ts';

/** One page as a paginated liveQuery returns it (`paginate` in fw). */
export interface PageResult<T = unknown> {
  page: T[];
  isDone: boolean;
  continueCursor: string | null;
}

/** The `page` argument the pages are subscribed with. */
export interface PageArgs {
  cursor: string | null;
  numItems: number;
  endCursor?: string | null;
}

/**
 * `loadingFirstPage` → `canLoadMore` ⇄ `loadingMore`, or `exhausted` once the last page says there is
 * nothing after it (it then stays live and shows rows added at the end).
 */
export type PaginationStatus = 'loadingFirstPage' | 'canLoadMore' | 'loadingMore' | 'exhausted';

/** What a paginated subscriber sees; a new object whenever something changed. */
export interface PaginatedSnapshot<T = unknown> {
  /** The rows of every loaded page, in order; each page stays live. */
  readonly results: readonly T[];
  readonly status: PaginationStatus;
  readonly isDone: boolean;
  /** The last failure of a page; an `invalid_cursor` is answered by starting over from the first page. */
  readonly error: FwError | undefined;
  /** The first page's stream status (`live`, `reconnecting`, …): every page shares one stream. */
  readonly liveStatus: LiveStatus;
}

export interface PaginatedLiveOptions {
  liveStore: LiveStore;
  /** The liveQuery's args without `page`. */
  args: Record<string, unknown>;
  /** Rows a new page reads (default 20). */
  pageSize: number;
  /** The live-store key of one page's full args (the same key useLiveQuery would give them). */
  keyOf(args: Record<string, unknown>): string;
  /** How to open one page's subscription. */
  sourceOf(args: Record<string, unknown>): LiveSource;
}

export interface PaginatedLive<T = unknown> {
  /** `listener` is told once per settled change: after the turn in which pages' snapshots landed, not per page. */
  subscribe(listener: () => void): () => void;
  getSnapshot(): PaginatedSnapshot<T>;
  /**
   * Loads the next `numItems` rows (default: the page size). Holds the page loaded last by its bounds
   * (`endCursor` = its continueCursor) so it never overlaps the new one. False when there is nothing to
   * load yet (a page is loading) or nothing after the last page.
   */
  loadMore(numItems?: number): boolean;
  /** Reopens every page whose subscription ended (LiveStore.retry); open ones are left as they are. */
  retry(): void;
}

interface Subscribed {
  readonly page: PageArgs;
  readonly key: string;
  stop: (() => void) | undefined;
}

interface Page {
  /** The subscription shown. */
  current: Subscribed;
  /** The same page held by its bounds, shown once it has data (no flash of an empty page). */
  held: Subscribed | undefined;
}

const initial: PaginatedSnapshot = Object.freeze({ results: Object.freeze([]), status: 'loadingFirstPage', isDone: false, error: undefined, liveStatus: 'connecting' });

/**
 * The pages of one paginated liveQuery over a live store, shaped for `useSyncExternalStore` and Vue
 * refs. The first page is (null, its size]; loading more holds the page before by (start, end] and
 * opens the next at that end, so a row inserted, deleted or moved across a boundary shows once and in
 * exactly one page (the way Convex holds a page by its first end cursor). Subscriptions open with the
 * first listener and close with the last.
 *
 * @example
 *   const pages = createPaginatedLive({ liveStore, args: { list: 1 }, pageSize: 20, keyOf, sourceOf });
 *   const stop = pages.subscribe(render);
 *   pages.loadMore();
 */
export function createPaginatedLive<T = unknown>(options: PaginatedLiveOptions): PaginatedLive<T> {
  const { liveStore, pageSize } = options;
  const listeners = new Set<{ listener: () => void }>();
  let pages: Page[] = [];
  let snapshot = initial as PaginatedSnapshot<T>;
  let lastError: FwError | undefined;
  /** The snapshot is out of date (current() makes it again); listeners are told in a microtask. */
  let dirty = false;
  let notifyQueued = false;

  const argsOf = (page: PageArgs) => ({ ...options.args, page });
  const subscribed = (page: PageArgs): Subscribed => {
    const args = argsOf(page);
    const entry: Subscribed = { page, key: options.keyOf(args), stop: undefined };
    if (listeners.size > 0) entry.stop = liveStore.subscribe(entry.key, options.sourceOf(args), changed);
    return entry;
  };
  const dataOf = (entry: Subscribed | undefined) => (entry ? (liveStore.getSnapshot(entry.key).data as PageResult<T> | undefined) : undefined);

  function start(): void {
    pages = [{ current: subscribed({ cursor: null, numItems: pageSize }), held: undefined }];
  }

  function stopAll(): void {
    for (const page of pages) {
      page.current.stop?.();
      page.held?.stop?.();
    }
  }

  function changed(): void {
    // A held page that has data replaces the one it holds.
    for (const page of pages) {
      if (page.held && dataOf(page.held) !== undefined) {
        page.current.stop?.();
        page.current = page.held;
        page.held = undefined;
      }
    }
    // Only a page with a cursor can have an invalid one (the first page's error would only repeat).
    const failure = pages
      .flatMap((page) => [page.current, page.held])
      .filter((entry) => entry !== undefined && (entry.page.cursor !== null || entry.page.endCursor != null))
      .map((entry) => liveStore.getSnapshot(entry!.key).error)
      .find((error) => error?.code === 'invalid_cursor');
    if (failure) {
      // A cursor the server no longer accepts (another deployment's order, forged, stale): start over.
      lastError = failure;
      stopAll();
      start();
    }
    // A page read with a size is held by its end as soon as it has one: rows inserted before that end
    // then grow it rather than push its last rows out of view (Convex keeps a page's first end cursor).
    // A last page with nothing after it stays open-ended, so rows added at the end show.
    const last = pages.at(-1);
    const lastData = dataOf(last?.current);
    if (last && !last.held && last.current.page.endCursor == null && lastData && !lastData.isDone && lastData.continueCursor !== null) {
      last.held = subscribed({ ...last.current.page, endCursor: lastData.continueCursor });
    }
    recompute();
  }

  /**
   * Something changed: the snapshot is made again when next read, and the listeners hear of it once,
   * after the current turn. Pages' snapshots that arrive together (one chunk of the stream carries
   * several) are handled one by one in that turn; a listener told after each would see a row that moved
   * from one page to another in both, or in neither.
   */
  function recompute(): void {
    dirty = true;
    if (notifyQueued) return;
    notifyQueued = true;
    queueMicrotask(() => {
      notifyQueued = false;
      for (const { listener } of [...listeners]) listener();
    });
  }

  function current(): PaginatedSnapshot<T> {
    if (!dirty) return snapshot;
    dirty = false;
    const results: T[] = [];
    let status: PaginationStatus = 'canLoadMore';
    let isDone = false;
    let error: FwError | undefined;
    for (const [i, page] of pages.entries()) {
      const live = liveStore.getSnapshot(page.current.key);
      error ??= live.error ?? (page.held ? liveStore.getSnapshot(page.held.key).error : undefined);
      const data = live.data as PageResult<T> | undefined;
      if (data === undefined) {
        status = i === 0 ? 'loadingFirstPage' : 'loadingMore';
        break;
      }
      results.push(...data.page);
      if (i === pages.length - 1 && data.isDone) {
        status = 'exhausted';
        isDone = true;
      }
    }
    if (status !== 'loadingFirstPage') lastError = undefined;
    const liveStatus = pages[0] ? liveStore.getSnapshot(pages[0].current.key).status : 'connecting';
    snapshot = Object.freeze({ results: Object.freeze(results), status, isDone, error: error ?? lastError, liveStatus });
    return snapshot;
  }

  start();

  return {
    subscribe(listener) {
      const token = { listener };
      listeners.add(token);
      if (listeners.size === 1) {
        for (const page of pages) {
          for (const entry of [page.current, page.held]) {
            if (entry && !entry.stop) entry.stop = liveStore.subscribe(entry.key, options.sourceOf(argsOf(entry.page)), changed);
          }
        }
        recompute();
      }
      return () => {
        if (!listeners.delete(token) || listeners.size > 0) return;
        for (const page of pages) {
          for (const entry of [page.current, page.held]) {
            entry?.stop?.();
            if (entry) entry.stop = undefined;
          }
        }
      };
    },

    getSnapshot: current,

    loadMore(numItems = pageSize) {
      const last = pages.at(-1);
      const data = dataOf(last?.current);
      if (!last || !data) return false;
      // Where the last page ends: its bounds once held; an open-ended one (it said isDone, then grew
      // past its size) is held at its current end now.
      let end = last.held?.page.endCursor ?? last.current.page.endCursor;
      if (end == null) {
        if (data.isDone || data.continueCursor === null) return false;
        end = data.continueCursor;
        last.held = subscribed({ ...last.current.page, endCursor: end });
      }
      pages.push({ current: subscribed({ cursor: end, numItems }), held: undefined });
      recompute();
      return true;
    },

    retry() {
      for (const page of pages) {
        for (const entry of [page.current, page.held]) if (entry?.stop) liveStore.retry(entry.key);
      }
    },
  };
}
