import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { until } from '../e2e/support/until.ts';
import { liveQuery, query } from '../runtime/core/entries.ts';
import type { EntryRef } from './api-types.ts';
import { createClient, type ClientOptions, FwError, type LiveHandlers, type LiveStatus, type LiveSubscription } from './index.ts';
import { createLiveConnection } from './live.ts';
import { type LiveRequestSubscription, parseLiveEvent } from './live-protocol.ts';

const TENANT = '00000000-0000-4000-8000-0000000000d1';

/**
 * Polls until `assertion` holds (the deadline only bounds a hang); on a timeout its own failure is
 * thrown, naming what differs.
 */
async function eventually(assertion: () => void): Promise<void> {
  const holds = async () => {
    try {
      assertion();
      return true;
    } catch {
      return false;
    }
  };
  await until(holds, 'an assertion to hold', { intervalMs: 5 }).catch(() => assertion());
}

/** A later turn of the event loop: every microtask queued before has run (flushes are microtasks). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const entries = {
  liveNotes: liveQuery({
    args: { limit: z.number().optional(), tag: z.string().optional() },
    handler: () => [{ title: 'a', at: new Date() }],
  }),
  liveCount: liveQuery({ handler: () => 0 }),
  listNotes: query({ handler: () => [] as string[] }),
};

// Written by hand in the generator's shape (src/fw/_generated/api.ts).
const api = {
  commands: {},
  queries: {
    listNotes: { kind: 'query', name: 'listNotes', reads: [], writes: [] } as EntryRef<'query', typeof entries.listNotes>,
  },
  liveQueries: {
    liveNotes: { kind: 'liveQuery', name: 'liveNotes', reads: ['notes'], writes: [] } as EntryRef<'liveQuery', typeof entries.liveNotes>,
    liveCount: { kind: 'liveQuery', name: 'liveCount', reads: ['notes'], writes: [] } as EntryRef<'liveQuery', typeof entries.liveCount>,
  },
} as const;

/** One `POST /live` request as the scripted server saw it, and the means to answer it. */
interface LiveCall {
  subscriptions: LiveRequestSubscription[];
  headers: IncomingHttpHeaders;
  /** True once the client went away before the server ended the response. */
  abandoned: boolean;
  closed: Promise<void>;
  open(): void;
  snapshot(key: string, revision: number, result: unknown): void;
  upToDate(key: string, revision: number): void;
  send(event: string, data: Record<string, unknown>, id?: number): void;
  /** Ends the stream cleanly. */
  end(): void;
  /** Breaks the connection mid-stream. */
  cut(): void;
  /** Answers with fw's JSON error envelope instead of a stream. */
  refuse(status: number, code: string, message: string): void;
}

/** A server that speaks docs/live.md's `POST /live` only as far as each test scripts it. */
function scriptedServer() {
  const calls: LiveCall[] = [];
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/live') return void res.writeHead(404).end();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { subscriptions: LiveRequestSubscription[] };
      calls.push(liveCall(body.subscriptions, req.headers, res));
    });
  });

  function liveCall(subscriptions: LiveRequestSubscription[], headers: IncomingHttpHeaders, res: ServerResponse): LiveCall {
    let markClosed: () => void = () => {};
    const call: LiveCall = {
      subscriptions,
      headers,
      abandoned: false,
      closed: new Promise<void>((resolve) => (markClosed = resolve)),
      open: () => {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform' });
        res.write(': fw live\nretry: 1000\n\n');
      },
      send: (event, data, id) => void res.write(`event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`),
      snapshot: (key, revision, result) => call.send('snapshot', { subscriptionId: `sub-${key}`, key, revision, result }, revision),
      upToDate: (key, revision) => call.send('up-to-date', { subscriptionId: `sub-${key}`, key, revision }, revision),
      end: () => void res.end(),
      cut: () => void res.socket?.destroy(),
      refuse: (status, code, message) =>
        void res
          .writeHead(status, { 'content-type': 'application/json', 'x-fw-trace-id': 'trace-refused' })
          .end(JSON.stringify({ ok: false, error: { code, message, diagnostics: [] }, traceId: 'trace-refused' })),
    };
    res.on('close', () => {
      call.abandoned = !res.writableFinished;
      markClosed();
    });
    return call;
  }

  return {
    calls,
    server,
    url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** The `index`th request (0-based), once it has arrived. */
    call: (index: number): Promise<LiveCall> => until(async () => calls[index], `request #${index} to arrive`, { intervalMs: 5 }),
  };
}

/** Records what a subscription's handlers were told. */
function recorder<R>() {
  const log = {
    data: [] as { result: R; revision: number }[],
    errors: [] as FwError[],
    statuses: [] as LiveStatus[],
    resets: 0,
  };
  const handlers: LiveHandlers<R> = {
    onData: (result, revision) => log.data.push({ result, revision }),
    onError: (error) => log.errors.push(error),
    onStatus: (status) => log.statuses.push(status),
    onReset: () => log.resets++,
  };
  return Object.assign(log, { handlers });
}

const keyOf = (call: LiveCall, name: string, args: unknown = {}) =>
  call.subscriptions.find((s) => s.name === name && JSON.stringify(s.args) === JSON.stringify(args))!.key;

describe('client.live against a scripted POST /live server', () => {
  const scripted = scriptedServer();
  const open: LiveSubscription[] = [];

  beforeAll(async () => {
    await new Promise<void>((resolve) => scripted.server.listen(0, '127.0.0.1', resolve));
  });

  afterEach(async () => {
    // Every test ends with its subscriptions closed, so the server must see every stream go.
    for (const subscription of open.splice(0)) subscription.close();
    await Promise.all(scripted.calls.splice(0).map((call) => call.closed));
  });

  afterAll(() => {
    scripted.server.close();
  });

  function client(extra: Partial<ClientOptions<typeof api>> = {}) {
    const created = createClient({ apiUrl: scripted.url(), api, live: { minRetryMs: 5, maxRetryMs: 20 }, ...extra });
    const live: typeof created.live = (...args) => {
      const subscription = created.live(...args);
      open.push(subscription);
      return subscription;
    };
    return { ...created, live };
  }

  it('delivers typed snapshots with the caller headers, and reports its status and revision', async () => {
    let tokens = 0;
    const fw = client({
      devAuth: { userId: 'alice', tenantId: TENANT, role: 'member' },
      getToken: () => `token-${++tokens}`,
      headers: { 'x-app': 'notes' },
    });
    const notes = recorder<{ title: string; at: string }[]>();
    const subscription = fw.live('liveNotes', { limit: 2 }, notes.handlers);
    expect(subscription.status).toBe('connecting');

    const call = await scripted.call(0);
    expect(call.subscriptions).toEqual([{ key: expect.any(String), name: 'liveNotes', args: { limit: 2 } }]);
    expect(call.headers).toMatchObject({
      accept: 'text/event-stream',
      'content-type': 'application/json',
      'x-fw-user-id': 'alice',
      'x-fw-tenant-id': TENANT,
      'x-fw-role': 'member',
      authorization: 'Bearer token-1',
      'x-app': 'notes',
    });

    call.open();
    call.snapshot(call.subscriptions[0]!.key, 3, [{ title: 'a', at: '2025-01-01T00:00:00.000Z' }]);
    await eventually(() => expect(notes.data).toHaveLength(1));
    const [first] = notes.data;
    // Typed as the liveQuery's result over the wire: the Date arrives as a string.
    const at: string | undefined = first?.result[0]?.at;
    expect(at).toBe('2025-01-01T00:00:00.000Z');
    expect(first?.revision).toBe(3);
    expect(notes.statuses).toEqual(['live']);
    expect([subscription.status, subscription.revision]).toEqual(['live', 3]);
    expect(notes.errors).toEqual([]);

    subscription.close();
    expect(subscription.status).toBe('closed');
    await call.closed;
    expect(call.abandoned).toBe(true);
  });

  it('shares one stream entry between identical subscriptions; a late joiner gets the current data at once', async () => {
    const fw = client();
    const first = recorder<unknown>();
    const second = recorder<unknown>();
    const a = fw.live('liveNotes', { limit: 2, tag: 'x' }, first.handlers);
    const b = fw.live(api.liveQueries.liveNotes, { tag: 'x', limit: 2 }, second.handlers);
    const call = await scripted.call(0);
    expect(call.subscriptions).toHaveLength(1);
    call.open();
    call.snapshot(call.subscriptions[0]!.key, 10, ['n1']);
    await eventually(() => expect(second.data).toEqual([{ result: ['n1'], revision: 10 }]));
    expect(first.data).toEqual([{ result: ['n1'], revision: 10 }]);

    const late = recorder<unknown>();
    const c = fw.live('liveNotes', { tag: 'x', limit: 2 }, late.handlers);
    expect(late.data).toEqual([]); // never inside live() itself
    await eventually(() => expect(late.data).toEqual([{ result: ['n1'], revision: 10 }]));
    expect(c.status).toBe('live');

    a.close();
    b.close();
    // The stream stays: the next snapshot on it reaches the one subscription left (a reopen would have
    // aborted it first), and no longer the two that closed.
    call.snapshot(call.subscriptions[0]!.key, 11, ['n2']);
    await eventually(() => expect(late.data).toEqual([{ result: ['n1'], revision: 10 }, { result: ['n2'], revision: 11 }]));
    expect(first.data).toEqual([{ result: ['n1'], revision: 10 }]);
    expect(second.data).toEqual([{ result: ['n1'], revision: 10 }]);
    expect(scripted.calls).toHaveLength(1);
    expect(call.abandoned).toBe(false);
    c.close();
    await call.closed;
    expect(call.abandoned).toBe(true);
  });

  it('reopens once for changes made in one tick, resuming unchanged subscriptions from their revision', async () => {
    const fw = client();
    const notes = recorder<unknown>();
    const notesSub = fw.live('liveNotes', {}, notes.handlers);
    const call0 = await scripted.call(0);
    const notesKey = keyOf(call0, 'liveNotes');
    call0.open();
    call0.snapshot(notesKey, 7, ['first']);
    await eventually(() => expect(notes.data).toHaveLength(1));

    const limited = fw.live('liveNotes', { limit: 1 }, recorder<unknown>().handlers);
    const count = recorder<number>();
    fw.live('liveCount', {}, count.handlers);
    const call1 = await scripted.call(1);
    await call0.closed;
    expect(call1.subscriptions).toEqual([
      { key: notesKey, name: 'liveNotes', args: {}, lastRevision: 7 },
      { key: expect.any(String), name: 'liveNotes', args: { limit: 1 } },
      { key: expect.any(String), name: 'liveCount', args: {} },
    ]);

    call1.open();
    call1.upToDate(notesKey, 7);
    call1.snapshot(keyOf(call1, 'liveCount'), 8, 2);
    await eventually(() => expect(count.data).toEqual([{ result: 2, revision: 8 }]));
    // up-to-date: the data held stays, nothing is delivered again.
    expect(notes.data).toEqual([{ result: ['first'], revision: 7 }]);
    expect(notes.statuses).toEqual(['live']);
    expect(notesSub.status).toBe('live');

    limited.close();
    const call2 = await scripted.call(2);
    expect(call2.subscriptions).toEqual([
      { key: notesKey, name: 'liveNotes', args: {}, lastRevision: 7 },
      { key: keyOf(call1, 'liveCount'), name: 'liveCount', args: {}, lastRevision: 8 },
    ]);
    await call1.closed;
    expect(call1.abandoned).toBe(true);
    // The one reopen is the stream in use: a second one would have aborted it before this arrives.
    call2.open();
    call2.snapshot(keyOf(call2, 'liveCount'), 9, 3);
    await eventually(() => expect(count.data).toEqual([{ result: 2, revision: 8 }, { result: 3, revision: 9 }]));
    expect(scripted.calls).toHaveLength(3);
  });

  it('on reset drops the revision; the snapshot that follows replaces the data', async () => {
    const fw = client();
    const notes = recorder<unknown>();
    const subscription = fw.live('liveNotes', {}, notes.handlers, { lastRevision: 3 });
    expect(subscription.revision).toBe(3);
    const call = await scripted.call(0);
    const key = keyOf(call, 'liveNotes');
    expect(call.subscriptions[0]?.lastRevision).toBe(3);
    call.open();
    call.send('reset', { subscriptionId: 'sub', key, reason: 'revision_too_old', message: 'Too old.', oldestRevision: 40 });
    await eventually(() => expect(notes.resets).toBe(1));
    expect(subscription.revision).toBeUndefined();
    expect(notes.data).toEqual([]);
    call.snapshot(key, 50, ['fresh']);
    await eventually(() => expect(notes.data).toEqual([{ result: ['fresh'], revision: 50 }]));
    expect(subscription.revision).toBe(50);
  });

  it('keeps a subscription through a non-fatal error; a fatal one ends it and it is not sent again', async () => {
    const fw = client();
    const notes = recorder<unknown>();
    const count = recorder<number>();
    const notesSub = fw.live('liveNotes', {}, notes.handlers);
    const countSub = fw.live('liveCount', {}, count.handlers);
    const call0 = await scripted.call(0);
    const [notesKey, countKey] = [keyOf(call0, 'liveNotes'), keyOf(call0, 'liveCount')];
    call0.open();
    call0.snapshot(notesKey, 5, ['n']);
    call0.snapshot(countKey, 5, 1);
    await eventually(() => expect(count.data).toHaveLength(1));

    call0.send('error', {
      subscriptionId: 'sub',
      key: notesKey,
      fatal: false,
      error: { code: 'internal', message: 'The re-run failed.', diagnostics: [] },
      traceId: 'trace-rerun',
    });
    await eventually(() => expect(notes.errors).toHaveLength(1));
    expect(notes.errors[0]).toBeInstanceOf(FwError);
    expect(notes.errors[0]).toMatchObject({ code: 'internal', status: 500, traceId: 'trace-rerun' });
    expect([notesSub.status, notesSub.revision]).toEqual(['live', 5]);
    call0.snapshot(notesKey, 6, ['n', 'm']);
    await eventually(() => expect(notes.data).toHaveLength(2));

    call0.send('error', {
      subscriptionId: 'sub',
      key: countKey,
      fatal: true,
      error: { code: 'forbidden', message: 'Not yours.', diagnostics: [{ path: 'args', code: 'policy', message: 'Denied.' }] },
      traceId: 'trace-denied',
    });
    await eventually(() => expect(count.statuses).toEqual(['live', 'closed']));
    expect(count.errors[0]).toMatchObject({ code: 'forbidden', status: 403, traceId: 'trace-denied' });
    expect(count.errors[0]?.diagnostics.map((d) => d.path)).toEqual(['args']);
    expect(countSub.status).toBe('closed');
    // The server dropped it from the stream already: no reopen for that. The stream goes on (a reopen
    // would have aborted it before this arrives).
    call0.snapshot(notesKey, 7, ['n', 'm', 'o']);
    await eventually(() => expect(notes.data.map((d) => d.revision)).toEqual([5, 6, 7]));
    expect(count.data).toEqual([{ result: 1, revision: 5 }]);
    expect(scripted.calls).toHaveLength(1);

    // The next reopen carries what is left, and not the subscription that ended.
    fw.live('liveNotes', { limit: 3 }, recorder<unknown>().handlers);
    const call1 = await scripted.call(1);
    expect(call1.subscriptions.map((s) => [s.name, s.args, s.lastRevision])).toEqual([
      ['liveNotes', {}, 7],
      ['liveNotes', { limit: 3 }, undefined],
    ]);
    countSub.close(); // harmless after the end
  });

  it('reconnects with backoff when the stream ends or breaks, resuming from its revision with fresh headers', async () => {
    let tokens = 0;
    const fw = client({ getToken: async () => `token-${++tokens}` });
    const notes = recorder<unknown>();
    const subscription = fw.live('liveNotes', {}, notes.handlers);
    const call0 = await scripted.call(0);
    const key = keyOf(call0, 'liveNotes');
    call0.open();
    call0.snapshot(key, 4, ['n']);
    await eventually(() => expect(notes.data).toHaveLength(1));

    call0.end();
    const call1 = await scripted.call(1);
    expect(call1.subscriptions).toEqual([{ key, name: 'liveNotes', args: {}, lastRevision: 4 }]);
    expect(call1.headers.authorization).toBe('Bearer token-2');
    expect(notes.statuses).toEqual(['live', 'reconnecting']);
    // A stream that simply ended is not an error.
    expect(notes.errors).toEqual([]);
    call1.open();
    call1.upToDate(key, 4);
    await eventually(() => expect(subscription.status).toBe('live'));

    call1.cut();
    const call2 = await scripted.call(2);
    expect(notes.errors.map((e) => e.code)).toEqual(['network_error']);
    expect(call2.subscriptions[0]?.lastRevision).toBe(4);
    expect(call2.headers.authorization).toBe('Bearer token-3');
    call2.open();
    call2.snapshot(key, 9, ['n', 'o']);
    await eventually(() => expect(notes.data).toHaveLength(2));
    expect(notes.statuses).toEqual(['live', 'reconnecting', 'live', 'reconnecting', 'live']);
    expect(notes.data.map((d) => d.revision)).toEqual([4, 9]);
  });

  it('retries 503 and 429 refusals with backoff, telling the subscriptions why', async () => {
    const fw = client();
    const notes = recorder<unknown>();
    const subscription = fw.live('liveNotes', {}, notes.handlers);
    (await scripted.call(0)).refuse(503, 'unavailable', 'Starting up.');
    (await scripted.call(1)).refuse(429, 'too_many_subscriptions', 'At most 64 subscriptions per connection.');
    const call2 = await scripted.call(2);
    expect(notes.errors.map((e) => [e.code, e.status, e.traceId])).toEqual([
      ['unavailable', 503, 'trace-refused'],
      ['too_many_subscriptions', 429, 'trace-refused'],
    ]);
    expect(subscription.status).toBe('connecting');
    call2.open();
    call2.snapshot(keyOf(call2, 'liveNotes'), 1, []);
    await eventually(() => expect(subscription.status).toBe('live'));
  });

  it('ends every subscription of a request refused with 403 and does not retry it', async () => {
    const fw = client({ live: { minRetryMs: 1, maxRetryMs: 2 } });
    const notes = recorder<unknown>();
    const count = recorder<number>();
    const notesSub = fw.live('liveNotes', {}, notes.handlers);
    fw.live('liveCount', {}, count.handlers);
    (await scripted.call(0)).refuse(403, 'forbidden', 'Sign in as a member.');
    await eventually(() => expect(notes.statuses).toEqual(['closed']));
    for (const log of [notes, count]) {
      expect(log.errors).toHaveLength(1);
      expect(log.errors[0]).toBeInstanceOf(FwError);
      expect(log.errors[0]).toMatchObject({ code: 'forbidden', status: 403, traceId: 'trace-refused', message: 'Sign in as a member.' });
    }
    expect(count.statuses).toEqual(['closed']);
    expect(notesSub.status).toBe('closed');
    // That no retry timer is left is held with fake timers below ("gives up on a refusal").

    // The connection itself is still usable for new subscriptions, and the refused ones are not sent again.
    fw.live('liveNotes', { limit: 1 }, recorder<unknown>().handlers);
    expect((await scripted.call(1)).subscriptions.map((s) => [s.name, s.args])).toEqual([['liveNotes', { limit: 1 }]]);
  });

  it('aborts the request when the last subscription closes, even before the stream opened', async () => {
    // Every request the client starts, as it starts it (one aborted before it reaches the server included).
    const sent: string[][] = [];
    const fw = client({
      fetch: (input, init) => {
        sent.push((JSON.parse(String(init?.body)) as { subscriptions: LiveRequestSubscription[] }).subscriptions.map((s) => s.name));
        return fetch(input, init);
      },
    });
    const subscription = fw.live('liveNotes', {}, recorder<unknown>().handlers);
    const call = await scripted.call(0);
    subscription.close();
    await call.closed;
    expect(call.abandoned).toBe(true);

    // Opened and closed in the same tick: nothing is sent at all — the request of a later subscription
    // is the next one the client starts.
    fw.live('liveCount', {}, recorder<number>().handlers).close();
    await nextTurn();
    fw.live('liveNotes', { limit: 9 }, recorder<unknown>().handlers);
    expect((await scripted.call(1)).subscriptions.map((s) => [s.name, s.args])).toEqual([['liveNotes', { limit: 9 }]]);
    expect(sent).toEqual([['liveNotes'], ['liveNotes']]);
  });

  it('refuses names and refs that are not liveQueries at the call site', () => {
    const fw = client();
    // @ts-expect-error a query cannot be subscribed to
    expect(() => fw.live('listNotes', {}, recorder<unknown>().handlers)).toThrow(/no liveQuery named "listNotes".*liveCount, liveNotes/);
    // @ts-expect-error a query ref cannot be subscribed to
    expect(() => fw.live(api.queries.listNotes, {}, recorder<unknown>().handlers)).toThrow(/query "listNotes" cannot be called as a liveQuery/);
  });
});

describe('live connection backoff (fake timers, in-process responses)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const encoder = new TextEncoder();
  /** A stream response that sends `text` and ends. */
  const streamOf = (text: string) =>
    new Response(
      new ReadableStream({
        start(controller) {
          controller.enqueue(encoder.encode(text));
          controller.close();
        },
      }),
      { headers: { 'content-type': 'text/event-stream' } },
    );

  function connection(respond: (body: { subscriptions: LiveRequestSubscription[] }) => Promise<Response>) {
    const requests: { subscriptions: LiveRequestSubscription[] }[] = [];
    const fetch = vi.fn(async (_url: string | URL | Request, init?: RequestInit) => {
      const body = JSON.parse(String(init?.body)) as { subscriptions: LiveRequestSubscription[] };
      requests.push(body);
      return respond(body);
    });
    const live = createLiveConnection({
      url: 'http://fw.test/live',
      headers: async () => ({}),
      fetch: () => fetch as typeof globalThis.fetch,
      minRetryMs: 250,
      maxRetryMs: 1500,
      // The top of every jitter range, so each delay is its ceiling.
      random: () => 1,
    });
    return { live, requests };
  }

  it('doubles the delay up to the ceiling, and starts over once a stream works', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let working = false;
    const { live, requests } = connection(async ({ subscriptions }) => {
      if (!working) throw new TypeError('fetch failed');
      return streamOf(`event: snapshot\ndata: ${JSON.stringify({ subscriptionId: 's', key: subscriptions[0]!.key, revision: 1, result: 1 })}\n\n`);
    });
    const errors: string[] = [];
    live.subscribe('liveCount', {}, { onData: () => {}, onError: (error) => errors.push(error.code) });
    await vi.advanceTimersByTimeAsync(0);
    expect(requests).toHaveLength(1);

    for (const delay of [250, 500, 1000, 1500, 1500]) {
      const before = requests.length;
      await vi.advanceTimersByTimeAsync(delay - 1);
      expect(requests).toHaveLength(before);
      await vi.advanceTimersByTimeAsync(1);
      expect(requests).toHaveLength(before + 1);
    }
    expect(errors).toHaveLength(6);
    expect(new Set(errors)).toEqual(new Set(['network_error']));

    // The next attempt gets a stream with an event, which then ends: the backoff starts over.
    working = true;
    await vi.advanceTimersByTimeAsync(1500);
    expect(requests).toHaveLength(7);
    await vi.advanceTimersByTimeAsync(249);
    expect(requests).toHaveLength(7);
    await vi.advanceTimersByTimeAsync(1);
    expect(requests).toHaveLength(8);
    expect(requests[7]?.subscriptions[0]?.lastRevision).toBe(1);
  });

  it('leaves no timer and sends nothing more once the last subscription closes during a backoff', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { live, requests } = connection(async () => {
      throw new TypeError('fetch failed');
    });
    const subscription = live.subscribe('liveCount', {}, { onData: () => {} });
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(1);
    subscription.close();
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(requests).toHaveLength(1);
  });

  it('gives up on a refusal: the subscriptions end, no timer is left, nothing is sent again', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const refusal = { ok: false, error: { code: 'forbidden', message: 'Sign in as a member.', diagnostics: [] }, traceId: 'trace-refused' };
    const { live, requests } = connection(async () => new Response(JSON.stringify(refusal), { status: 403, headers: { 'content-type': 'application/json' } }));
    const errors: string[] = [];
    const statuses: LiveStatus[] = [];
    const subscription = live.subscribe('liveCount', {}, { onData: () => {}, onError: (error) => errors.push(error.code), onStatus: (status) => statuses.push(status) });
    await vi.advanceTimersByTimeAsync(0);
    expect([errors, statuses, subscription.status]).toEqual([['forbidden'], ['closed'], 'closed']);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(requests).toHaveLength(1);
  });

  it('aborts a working stream and leaves no timer once its last subscription closes', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let cancelled = 0;
    const { live, requests } = connection(
      async ({ subscriptions }) =>
        new Response(
          new ReadableStream({
            start(controller) {
              const snapshot = { subscriptionId: 's', key: subscriptions[0]!.key, revision: 1, result: 1 };
              controller.enqueue(encoder.encode(`event: snapshot\ndata: ${JSON.stringify(snapshot)}\n\n`));
              // Never closed: only the client ends it.
            },
            cancel() {
              cancelled++;
            },
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        ),
    );
    const data: unknown[] = [];
    const subscription = live.subscribe('liveCount', {}, { onData: (result) => data.push(result) });
    await vi.advanceTimersByTimeAsync(0);
    expect([data, subscription.status]).toEqual([[1], 'live']);
    subscription.close();
    await vi.advanceTimersByTimeAsync(0);
    expect(cancelled).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(requests).toHaveLength(1);
  });

  it('treats a malformed event as a broken stream and reconnects', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { live, requests } = connection(async () => streamOf('event: snapshot\ndata: {not json\n\n'));
    const errors: FwError[] = [];
    const subscription = live.subscribe('liveCount', {}, { onData: () => {}, onError: (error) => errors.push(error) });
    await vi.advanceTimersByTimeAsync(0);
    expect(errors.map((e) => e.code)).toEqual(['bad_response']);
    expect(errors[0]?.message).toMatch(/malformed "snapshot" event/);
    await vi.advanceTimersByTimeAsync(250);
    expect(requests).toHaveLength(2);
    subscription.close();
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('parseLiveEvent', () => {
  it('reads the four events, ignores unknown ones, and rejects malformed data', () => {
    expect(parseLiveEvent({ event: 'snapshot', id: '4', data: '{"subscriptionId":"x","key":"k","revision":4,"result":null}' })).toEqual({
      type: 'snapshot',
      key: 'k',
      revision: 4,
      covers: [],
      result: null,
    });
    expect(parseLiveEvent({ event: 'snapshot', id: '4', data: '{"subscriptionId":"x","key":"k","revision":4,"covers":[3,4],"result":1}' })).toMatchObject({ covers: [3, 4] });
    expect(parseLiveEvent({ event: 'up-to-date', id: '4', data: '{"subscriptionId":"x","key":"k","revision":4}' })).toEqual({
      type: 'up-to-date',
      key: 'k',
      revision: 4,
    });
    expect(() => parseLiveEvent({ event: 'snapshot', id: '1', data: '{"key":"k","revision":1,"covers":["1"],"result":1}' })).toThrow(FwError);
    expect(parseLiveEvent({ event: 'reset', id: undefined, data: '{"key":"k","reason":"too_old","message":"m","oldestRevision":9}' })).toEqual({
      type: 'reset',
      key: 'k',
      reason: 'too_old',
      message: 'm',
    });
    const error = parseLiveEvent({
      event: 'error',
      id: undefined,
      data: '{"key":"k","fatal":true,"error":{"code":"not_found","message":"No liveQuery named x."},"traceId":"t"}',
    });
    expect(error).toMatchObject({ type: 'error', key: 'k', fatal: true, error: { code: 'not_found', status: 404, traceId: 't' } });
    expect(parseLiveEvent({ event: 'stats', id: undefined, data: 'whatever' })).toBeUndefined();
    expect(parseLiveEvent({ event: undefined, id: undefined, data: 'hello' })).toBeUndefined();
    // A GET /live/:name event has no key: not for this stream.
    expect(parseLiveEvent({ event: 'up-to-date', id: '1', data: '{"subscriptionId":"x","revision":1}' })).toBeUndefined();
    expect(() => parseLiveEvent({ event: 'snapshot', id: '1', data: '{"key":"k","result":1}' })).toThrow(FwError);
    expect(() => parseLiveEvent({ event: 'snapshot', id: '1', data: '{"key":"k","revision":1}' })).toThrow(/no result/);
  });
});
