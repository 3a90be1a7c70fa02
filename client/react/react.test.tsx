// @vitest-environment happy-dom
import { act, cleanup, configure, fireEvent, render, renderHook, screen } from '@testing-library/react';
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ReactNode, StrictMode, useState } from 'react';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { z } from 'zod';
import { until } from '../../e2e/support/until.ts';
import { createDatabase, type FwDatabase } from '../../runtime/db/database.ts';
import { applyMigration, ensureSystemTables } from '../../runtime/db/migrate.ts';
import { command, liveQuery, query } from '../../runtime/core/entries.ts';
import { createRuntimeHandler } from '../../runtime/http/handler.ts';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import { defineSchema, t, table } from '../../runtime/core/schema.ts';
import type { EntryRef } from '../api-types.ts';
import type { DevAuth } from '../client.ts';
import { createFwReact } from './index.ts';

// happy-dom pages live on this origin, so calls to the runtime are cross-origin, as in a real app.
const PAGE_ORIGIN = 'http://localhost:3000';

// findBy* poll the DOM for the final state; their deadline only bounds a hang (the default 1 s is a
// timing assumption a busy machine breaks).
configure({ asyncUtilTimeout: 30_000 });

/**
 * Polls state outside React (what the server saw) inside act, so that React updates arriving meanwhile
 * are flushed with it; the deadline only bounds a hang.
 */
const serverSees = (probe: () => boolean, what: string) => act(() => until(async () => probe(), what, { intervalMs: 10 }));

const schema = defineSchema({
  notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text(), created_at: t.timestamptz().defaultNow() }),
  tags: table({ id: t.uuid().primaryKey().defaultRandom(), name: t.text() }),
});

const entries = {
  createNote: command({
    args: { title: z.string().min(1) },
    handler: (ctx, args) => ctx.db.insertInto('notes').values({ title: args.title }).returningAll().executeTakeFirstOrThrow(),
  }),
  listNotes: query({ handler: (ctx) => ctx.db.selectFrom('notes').selectAll().orderBy('title').execute() }),
  findNotes: query({
    args: { prefix: z.string(), limit: z.number().int() },
    handler: (ctx, args) =>
      ctx.db.selectFrom('notes').select('title').where('title', 'like', `${args.prefix}%`).orderBy('title').limit(args.limit).execute(),
  }),
  slowNotes: query({ handler: () => sleep(300).then(() => [] as string[]) }),
  listTags: query({ handler: (ctx) => ctx.db.selectFrom('tags').selectAll().execute() }),
};

// Written by hand in the generator's shape (src/fw/_generated/api.ts).
const api = {
  commands: {
    createNote: { kind: 'command', name: 'createNote', reads: [], writes: ['notes'] } as EntryRef<'command', typeof entries.createNote>,
  },
  queries: {
    listNotes: { kind: 'query', name: 'listNotes', reads: ['notes'], writes: [] } as EntryRef<'query', typeof entries.listNotes>,
    findNotes: { kind: 'query', name: 'findNotes', reads: ['notes'], writes: [] } as EntryRef<'query', typeof entries.findNotes>,
    slowNotes: { kind: 'query', name: 'slowNotes', reads: ['notes'], writes: [] } as EntryRef<'query', typeof entries.slowNotes>,
    listTags: { kind: 'query', name: 'listTags', reads: ['tags'], writes: [] } as EntryRef<'query', typeof entries.listTags>,
  },
  liveQueries: {},
} as const;

const { FwProvider, useCommand, useQuery, useFwClient } = createFwReact(api);

function NoteList({ label = 'notes' }: { label?: string }) {
  const { data, error, isLoading } = useQuery('listNotes', {});
  if (isLoading) return <p>loading {label}</p>;
  if (error) return <p>error {error.code}</p>;
  return <ul aria-label={label}>{data?.map((note) => <li key={note.id}>{note.title}</li>)}</ul>;
}

function TagCount() {
  const { data } = useQuery(api.queries.listTags, {});
  return <p>tags: {data ? data.length : '…'}</p>;
}

function Finder({ prefix, reordered = false }: { prefix: string; reordered?: boolean }) {
  // Inline literals, new on every render, in either key order: one cache entry, one request.
  const { data } = useQuery('findNotes', reordered ? { limit: 5, prefix } : { prefix, limit: 5 });
  return <p>found{reordered ? '*' : ''}: {data ? data.map((n) => n.title).join(',') : '…'}</p>;
}

function NewNote({ title }: { title: string }) {
  const { mutate, mutateAsync, data, error, isPending } = useCommand('createNote');
  const [caught, setCaught] = useState('');
  return (
    <>
      <button onClick={() => mutate({ title })}>add</button>
      <button onClick={() => mutateAsync({ title }).catch((e: { code: string }) => setCaught(e.code))}>add async</button>
      {isPending && <p>saving</p>}
      {data && <p>saved {data.title}</p>}
      {error && <p role="alert">{`${error.code}: ${error.diagnostics.map((d) => d.path).join(',')}`}</p>}
      {caught && <p>caught {caught}</p>}
    </>
  );
}

function Toggle({ children }: { children: ReactNode }) {
  const [shown, setShown] = useState(true);
  return (
    <>
      <button onClick={() => setShown((s) => !s)}>toggle</button>
      {shown && children}
    </>
  );
}

describe('fw/react against a running runtime', () => {
  let db: FwDatabase;
  let server: Server;
  let url: string;
  // Per tenant, so each test counts only its own requests: "<tenant> /queries/listNotes" → n.
  const requests = new Map<string, number>();
  const abandoned: string[] = [];
  let consoleError: MockInstance;

  beforeAll(async () => {
    db = await createDatabase({ dataDir: 'memory://' });
    await ensureSystemTables(db);
    const app: AppDefinition = { entries: new Map(Object.entries(entries)), policies: {}, schema };
    expect((await applyMigration(db, schema)).blocked).toEqual([]);
    const handler = createRuntimeHandler({ app, db, dev: true, cors: { origins: [PAGE_ORIGIN] } });
    server = createServer((req, res) => {
      const call = `${req.headers['x-fw-tenant-id']} ${req.url}`;
      if (req.method === 'POST') requests.set(call, (requests.get(call) ?? 0) + 1);
      res.on('close', () => {
        if (!res.writableFinished) abandoned.push(call);
      });
      handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server?.close();
    await db?.close();
  });

  beforeEach(() => {
    consoleError = vi.spyOn(console, 'error');
  });

  afterEach(() => {
    cleanup();
    // No act() warnings, no updates on unmounted components, no React errors.
    expect(consoleError).not.toHaveBeenCalled();
    consoleError.mockRestore();
  });

  const newIdentity = (): DevAuth => ({ userId: 'alice', tenantId: randomUUID(), role: 'member' });
  const count = (auth: DevAuth, path: string) => requests.get(`${auth.tenantId} ${path}`) ?? 0;

  it('after a command, refetches mounted queries that read what it wrote, and only those', async () => {
    const auth = newIdentity();
    render(
      <FwProvider apiUrl={url} devAuth={auth}>
        <NoteList />
        <TagCount />
        <NewNote title="hello" />
      </FwProvider>,
    );
    await screen.findByRole('list', { name: 'notes' });
    await screen.findByText('tags: 0');

    fireEvent.click(screen.getByRole('button', { name: 'add' }));
    await screen.findByText('saved hello');
    expect(screen.getAllByRole('listitem').map((li) => li.textContent)).toEqual(['hello']);
    expect(count(auth, '/commands/createNote')).toBe(1);
    expect(count(auth, '/queries/listNotes')).toBe(2);
    expect(count(auth, '/queries/listTags')).toBe(1);
  });

  it('shares one request and one cache entry between identical queries, across re-renders', async () => {
    const auth = newIdentity();
    const tree = () => (
      <FwProvider apiUrl={url} devAuth={{ ...auth }}>
        <NoteList label="first" />
        <NoteList label="second" />
        <Finder prefix="x" />
        <Finder prefix="x" reordered />
        <NewNote title="x1" />
      </FwProvider>
    );
    const { rerender } = render(tree());
    await screen.findByRole('list', { name: 'first' });
    await screen.findByRole('list', { name: 'second' });
    await screen.findByText('found:');
    await screen.findByText('found*:');
    expect([count(auth, '/queries/listNotes'), count(auth, '/queries/findNotes')]).toEqual([1, 1]);
    for (let i = 0; i < 3; i++) rerender(tree());
    // A command after the re-renders refetches each shared entry once; a request a re-render had sent
    // was sent before it, and would be counted here too.
    fireEvent.click(screen.getByRole('button', { name: 'add' }));
    await screen.findByText('found: x1');
    await screen.findByText('found*: x1');
    expect(screen.getAllByRole('listitem').map((li) => li.textContent)).toEqual(['x1', 'x1']);
    expect([count(auth, '/queries/listNotes'), count(auth, '/queries/findNotes'), count(auth, '/commands/createNote')]).toEqual([2, 2, 1]);
  });

  it('sends exactly one request per distinct query under StrictMode, and one refetch per command', async () => {
    const auth = newIdentity();
    render(
      <StrictMode>
        <FwProvider apiUrl={url} devAuth={auth}>
          <NoteList />
          <TagCount />
          <Finder prefix="h" />
          <NewNote title="hi" />
        </FwProvider>
      </StrictMode>,
    );
    await screen.findByRole('list', { name: 'notes' });
    await screen.findByText('tags: 0');
    await screen.findByText('found:');
    expect([count(auth, '/queries/listNotes'), count(auth, '/queries/listTags'), count(auth, '/queries/findNotes')]).toEqual([1, 1, 1]);

    fireEvent.click(screen.getByRole('button', { name: 'add' }));
    await screen.findByText('found: hi');
    expect([count(auth, '/queries/listNotes'), count(auth, '/queries/listTags'), count(auth, '/queries/findNotes')]).toEqual([2, 1, 2]);
    expect(count(auth, '/commands/createNote')).toBe(1);
  });

  it('keys results by caller identity: another devAuth refetches, an equal literal does not', async () => {
    const alice = newIdentity();
    const bob = { ...newIdentity(), userId: 'bob' };
    const { result } = renderHook(() => useFwClient(), { wrapper: ({ children }) => <FwProvider apiUrl={url} devAuth={alice}>{children}</FwProvider> });
    await result.current.command('createNote', { title: 'alice only' });

    const tree = (auth: DevAuth) => (
      <FwProvider apiUrl={url} devAuth={{ ...auth }}>
        <NoteList />
        <NewNote title="bob's" />
      </FwProvider>
    );
    const { rerender } = render(tree(alice));
    expect((await screen.findByRole('listitem')).textContent).toBe('alice only');
    rerender(tree(bob));
    expect((await screen.findByRole('list', { name: 'notes' })).children).toHaveLength(0);
    expect([count(alice, '/queries/listNotes'), count(bob, '/queries/listNotes')]).toEqual([1, 1]);
    rerender(tree(bob));
    // Bob's command after the equal literal refetches once: a request the re-render had sent was sent
    // before it, and would be counted here too.
    fireEvent.click(screen.getByRole('button', { name: 'add' }));
    expect((await screen.findByRole('listitem')).textContent).toBe("bob's");
    expect([count(alice, '/queries/listNotes'), count(bob, '/queries/listNotes'), count(bob, '/commands/createNote')]).toEqual([1, 2, 1]);
  });

  it('refetches when args change', async () => {
    const auth = newIdentity();
    function Search() {
      const [prefix, setPrefix] = useState('a');
      const { data } = useQuery('findNotes', { prefix, limit: 5 });
      return (
        <>
          <button onClick={() => setPrefix('b')}>search b</button>
          <p>found: {data ? data.map((n) => n.title).join(',') : '…'}</p>
        </>
      );
    }
    const { result } = renderHook(() => useFwClient(), { wrapper: ({ children }) => <FwProvider apiUrl={url} devAuth={auth}>{children}</FwProvider> });
    await result.current.command('createNote', { title: 'apple' });
    await result.current.command('createNote', { title: 'banana' });

    render(
      <FwProvider apiUrl={url} devAuth={auth}>
        <Search />
      </FwProvider>,
    );
    await screen.findByText('found: apple');
    fireEvent.click(screen.getByRole('button', { name: 'search b' }));
    await screen.findByText('found: banana');
    expect(count(auth, '/queries/findNotes')).toBe(2);
  });

  it('keeps results for remounts within gcTime, then drops them and aborts an abandoned request', async () => {
    const auth = newIdentity();
    const { unmount } = render(
      <FwProvider apiUrl={url} devAuth={auth} gcTime={60_000}>
        <Toggle>
          <NoteList />
        </Toggle>
      </FwProvider>,
    );
    expect((await screen.findByRole('list', { name: 'notes' })).children).toHaveLength(0);
    // Written behind the client's back (no command of its own invalidates the cache).
    await db.transaction({ readOnly: false, auth: { kind: 'user', userId: auth.userId, tenantId: auth.tenantId, role: auth.role } }, (trx) =>
      trx.insertInto('notes').values({ title: 'meanwhile' }).execute(),
    );
    fireEvent.click(screen.getByRole('button', { name: 'toggle' }));
    fireEvent.click(screen.getByRole('button', { name: 'toggle' }));
    // Shown from the cache at once, refreshed in the background.
    expect(screen.getByRole('list', { name: 'notes' }).children).toHaveLength(0);
    expect((await screen.findByRole('listitem')).textContent).toBe('meanwhile');
    expect(count(auth, '/queries/listNotes')).toBe(2);
    unmount();

    const shortLived = newIdentity();
    function Slow() {
      const { isLoading } = useQuery('slowNotes', {});
      return <p>{isLoading ? 'slow loading' : 'slow done'}</p>;
    }
    render(
      <FwProvider apiUrl={url} devAuth={shortLived} gcTime={20}>
        <Toggle>
          <Slow />
        </Toggle>
      </FwProvider>,
    );
    screen.getByText('slow loading');
    // Only a request the server has received can be seen abandoned by it (a busy machine may take longer than gcTime to send it).
    await serverSees(() => count(shortLived, '/queries/slowNotes') === 1, 'the server to receive the slow query');
    fireEvent.click(screen.getByRole('button', { name: 'toggle' }));
    // Nobody watches any more: after gcTime the entry is dropped and its request aborted.
    await serverSees(() => abandoned.includes(`${shortLived.tenantId} /queries/slowNotes`), 'the server to see the slow query abandoned');
    fireEvent.click(screen.getByRole('button', { name: 'toggle' }));
    screen.getByText('slow loading');
    await screen.findByText('slow done');
    expect(count(shortLived, '/queries/slowNotes')).toBe(2);
  });

  it('puts a failed command in error state with its diagnostics; mutateAsync rejects', async () => {
    const auth = newIdentity();
    render(
      <FwProvider apiUrl={url} devAuth={auth}>
        <NewNote title="" />
      </FwProvider>,
    );
    fireEvent.click(screen.getByRole('button', { name: 'add' }));
    expect((await screen.findByRole('alert')).textContent).toBe('validation_failed: args.title');
    fireEvent.click(screen.getByRole('button', { name: 'add async' }));
    await screen.findByText('caught validation_failed');
  });

  it('holds a query back while enabled is false', async () => {
    const auth = newIdentity();
    function Gated() {
      const [enabled, setEnabled] = useState(false);
      const { data, isLoading } = useQuery('listTags', {}, { enabled });
      return (
        <>
          <button onClick={() => setEnabled(true)}>enable</button>
          <p>{isLoading ? 'loading' : data ? `tags ${data.length}` : 'idle'}</p>
        </>
      );
    }
    render(
      <FwProvider apiUrl={url} devAuth={auth}>
        <Gated />
        <NoteList />
      </FwProvider>,
    );
    screen.getByText('idle');
    // A query mounted in the same commit has made its round trip: a request of the held one would have
    // been sent with it.
    await screen.findByRole('list', { name: 'notes' });
    screen.getByText('idle');
    expect([count(auth, '/queries/listNotes'), count(auth, '/queries/listTags')]).toEqual([1, 0]);
    fireEvent.click(screen.getByRole('button', { name: 'enable' }));
    await screen.findByText('tags 0');
    expect(count(auth, '/queries/listTags')).toBe(1);
  });
});

// useLiveQuery against a scripted `POST /live` server (docs/live.md): every request is answered at
// once with a snapshot of each subscription (or up-to-date when resumed at the current revision).
const liveEntries = {
  liveNotes: liveQuery({ args: { tag: z.string().optional() }, handler: () => [{ title: 'x', at: new Date() }] }),
  liveCount: liveQuery({ handler: () => 0 }),
};

const liveApi = {
  commands: {},
  queries: {},
  liveQueries: {
    liveNotes: { kind: 'liveQuery', name: 'liveNotes', reads: ['notes'], writes: [] } as EntryRef<'liveQuery', typeof liveEntries.liveNotes>,
    liveCount: { kind: 'liveQuery', name: 'liveCount', reads: ['notes'], writes: [] } as EntryRef<'liveQuery', typeof liveEntries.liveCount>,
  },
} as const;

const live = createFwReact(liveApi);

function LiveNotes({ label, tag }: { label: string; tag?: string }) {
  const { data, status, revision, error } = live.useLiveQuery('liveNotes', tag === undefined ? {} : { tag });
  const titles = data ? data.map((note) => note.title).join(',') : '…';
  return <p>{`${label}: ${status} ${titles} @${revision ?? '-'}${error ? ` ${error.code}` : ''}`}</p>;
}

function LiveCount() {
  const { data, status } = live.useLiveQuery(liveApi.liveQueries.liveCount, {});
  return <p>{`count: ${status} ${data ?? '…'}`}</p>;
}

interface ScriptedLiveCall {
  subscriptions: { key: string; name: string; args: unknown; lastRevision?: number }[];
  tenant: string;
  res: ServerResponse;
  abandoned: boolean;
  ended: boolean;
}

describe('useLiveQuery against a scripted live server', () => {
  let server: Server;
  let url: string;
  const calls: ScriptedLiveCall[] = [];
  /** Tenants whose requests are refused with 403 (the server's policy says no, until it changes its mind). */
  const refusedTenants = new Set<string>();
  let revision = 1;
  const results = new Map<string, unknown>([
    ['liveNotes', [{ title: 'n1', at: '2025-01-01T00:00:00.000Z' }]],
    ['liveCount', 1],
  ]);
  let consoleError: MockInstance;

  const snapshot = (call: ScriptedLiveCall, key: string, name: string) =>
    call.res.write(`event: snapshot\nid: ${revision}\ndata: ${JSON.stringify({ subscriptionId: key, key, revision, result: results.get(name) })}\n\n`);

  /**
   * A result written on one stream only, and not kept for streams opened later: it is seen only while
   * the client still reads that stream (closing or reopening aborts it first).
   */
  function pushOn(call: ScriptedLiveCall, name: string, result: unknown): void {
    revision++;
    for (const { key } of call.subscriptions.filter((subscription) => subscription.name === name)) {
      call.res.write(`event: snapshot\nid: ${revision}\ndata: ${JSON.stringify({ subscriptionId: key, key, revision, result })}\n\n`);
    }
  }

  /** A new result for liveQuery `name`, pushed to every open stream that carries it. */
  function push(name: string, result: unknown): void {
    revision++;
    results.set(name, result);
    for (const call of calls) {
      if (call.ended) continue;
      for (const subscription of call.subscriptions) if (subscription.name === name) snapshot(call, subscription.key, name);
    }
  }

  beforeAll(async () => {
    server = createServer((req, res) => {
      const cors = { 'access-control-allow-origin': PAGE_ORIGIN, 'access-control-expose-headers': 'x-fw-trace-id' };
      if (req.method === 'OPTIONS') {
        res.writeHead(204, {
          ...cors,
          'access-control-allow-methods': 'GET, POST, OPTIONS',
          'access-control-allow-headers': req.headers['access-control-request-headers'] ?? '',
        });
        return void res.end();
      }
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const { subscriptions } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Pick<ScriptedLiveCall, 'subscriptions'>;
        const call: ScriptedLiveCall = { subscriptions, tenant: String(req.headers['x-fw-tenant-id']), res, abandoned: false, ended: false };
        calls.push(call);
        if (refusedTenants.has(call.tenant)) {
          // What the runtime answers when the policy refuses the caller: the whole request, for good.
          call.ended = true;
          res.writeHead(403, { ...cors, 'content-type': 'application/json' });
          return void res.end(JSON.stringify({ ok: false, error: { code: 'forbidden', message: 'not allowed' }, traceId: 'trace-403' }));
        }
        res.on('close', () => {
          call.ended = true;
          call.abandoned = !res.writableFinished;
        });
        res.writeHead(200, { ...cors, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform' });
        res.write(': fw live\n\n');
        for (const { key, name, lastRevision } of subscriptions) {
          if (lastRevision === revision) res.write(`event: up-to-date\ndata: ${JSON.stringify({ subscriptionId: key, key, revision })}\n\n`);
          else snapshot(call, key, name);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    server?.close();
  });

  beforeEach(() => {
    consoleError = vi.spyOn(console, 'error');
  });

  afterEach(() => {
    cleanup();
    expect(consoleError).not.toHaveBeenCalled();
    consoleError.mockRestore();
  });

  const newIdentity = (): DevAuth => ({ userId: 'alice', tenantId: randomUUID(), role: 'member' });
  const callsOf = (auth: DevAuth) => calls.filter((call) => call.tenant === auth.tenantId);
  const FwProviderForLive = ({ auth, children }: { auth: DevAuth; children: ReactNode }) => (
    <live.FwProvider apiUrl={url} devAuth={auth}>
      {children}
    </live.FwProvider>
  );

  it('renders pushed data; identical live queries share one subscription, all of them one stream', async () => {
    const auth = newIdentity();
    const { unmount } = render(
      <FwProviderForLive auth={auth}>
        <Toggle>
          <LiveNotes label="a" />
        </Toggle>
        <LiveNotes label="b" />
        <LiveNotes label="tagged" tag="t" />
        <LiveCount />
      </FwProviderForLive>,
    );
    push('liveNotes', [{ title: 'n1' }]);
    const n1 = `n1 @${revision}`;
    await screen.findByText(`a: live ${n1}`);
    await screen.findByText(`b: live ${n1}`);
    await screen.findByText(`tagged: live ${n1}`);
    await screen.findByText('count: live 1');
    expect(callsOf(auth)).toHaveLength(1);
    expect(callsOf(auth)[0]!.subscriptions.map((s) => [s.name, s.args])).toEqual([
      ['liveNotes', {}],
      ['liveNotes', { tag: 't' }],
      ['liveCount', {}],
    ]);

    push('liveNotes', [{ title: 'n1' }, { title: 'n2' }]);
    await screen.findByText(`a: live n1,n2 @${revision}`);
    await screen.findByText(`b: live n1,n2 @${revision}`);
    await screen.findByText(`tagged: live n1,n2 @${revision}`);

    // One of two components leaves: the shared subscription stays, nothing is reopened — the stream
    // it had is still read.
    fireEvent.click(screen.getByRole('button', { name: 'toggle' }));
    pushOn(callsOf(auth)[0]!, 'liveNotes', [{ title: 'n3' }]);
    await screen.findByText(`b: live n3 @${revision}`);
    await screen.findByText(`tagged: live n3 @${revision}`);
    expect(screen.queryByText(/^a: /)).toBeNull();
    expect(callsOf(auth)).toHaveLength(1);
    expect(callsOf(auth)[0]!.ended).toBe(false);

    unmount();
    await serverSees(() => callsOf(auth)[0]!.abandoned, 'the server to see the stream abandoned');
    // That no reconnect timer is left behind is held with fake timers in client/live.test.ts.
    expect(callsOf(auth)).toHaveLength(1);
  });

  it('opens one stream with one subscription under StrictMode, and closes it on unmount', async () => {
    const auth = newIdentity();
    push('liveNotes', [{ title: 's1' }]);
    const { unmount } = render(
      <StrictMode>
        <FwProviderForLive auth={auth}>
          <LiveNotes label="strict" />
          <LiveNotes label="twin" />
        </FwProviderForLive>
      </StrictMode>,
    );
    await screen.findByText(`strict: live s1 @${revision}`);
    await screen.findByText(`twin: live s1 @${revision}`);
    // The first stream is the one in use: StrictMode's second mount did not reopen it.
    pushOn(callsOf(auth)[0]!, 'liveNotes', [{ title: 's2' }]);
    await screen.findByText(`strict: live s2 @${revision}`);
    await screen.findByText(`twin: live s2 @${revision}`);
    expect(callsOf(auth).map((call) => call.subscriptions.length)).toEqual([1]);
    unmount();
    await serverSees(() => callsOf(auth)[0]!.abandoned, 'the server to see the stream abandoned');
  });

  it('resubscribes when args change, in one reopen, and holds back while enabled is false', async () => {
    const auth = newIdentity();
    push('liveNotes', [{ title: 'g1' }, { title: 'g2' }]);
    function Gated() {
      const [enabled, setEnabled] = useState(false);
      const [tag, setTag] = useState('a');
      const { data, status } = live.useLiveQuery('liveNotes', { tag }, { enabled });
      return (
        <>
          <button onClick={() => setEnabled(true)}>enable</button>
          <button onClick={() => setTag('b')}>tag b</button>
          <p>{`gated ${tag}: ${status} ${data ? data.length : '…'}`}</p>
        </>
      );
    }
    render(
      <FwProviderForLive auth={auth}>
        <Gated />
      </FwProviderForLive>,
    );
    screen.getByText('gated a: closed …');

    fireEvent.click(screen.getByRole('button', { name: 'enable' }));
    await screen.findByText('gated a: live 2');
    fireEvent.click(screen.getByRole('button', { name: 'tag b' }));
    await screen.findByText('gated b: live 2');
    // The reopen for tag b is the stream in use (a second one would have aborted it first); the held
    // subscription had sent nothing (it would be the first request here).
    pushOn(callsOf(auth)[1]!, 'liveNotes', [{ title: 'b1' }]);
    await screen.findByText('gated b: live 1');
    expect(callsOf(auth).map((call) => call.subscriptions.map((s) => s.args))).toEqual([[{ tag: 'a' }], [{ tag: 'b' }]]);
    await serverSees(() => callsOf(auth)[0]!.ended, 'the server to see the tag-a stream end');
    expect(callsOf(auth)[0]!.abandoned).toBe(true);
  });

  it('retry reopens a subscription the server refused, once it allows it; a new subscriber reopens it too', async () => {
    const auth = newIdentity();
    refusedTenants.add(auth.tenantId!);
    push('liveCount', 7);
    function Retrying() {
      const { data, status, error, retry } = live.useLiveQuery('liveCount', {});
      return (
        <>
          <button onClick={retry}>retry</button>
          <p>{`retrying: ${status} ${data ?? '…'}${error ? ` ${error.code}` : ''}`}</p>
        </>
      );
    }
    const { unmount } = render(
      <StrictMode>
        <FwProviderForLive auth={auth}>
          <Retrying />
        </FwProviderForLive>
      </StrictMode>,
    );
    await screen.findByText('retrying: closed … forbidden');
    expect(callsOf(auth)).toHaveLength(1);

    // Still refused: retry goes back to connecting, then closed again with the error.
    fireEvent.click(screen.getByRole('button', { name: 'retry' }));
    await serverSees(() => callsOf(auth).length === 2, 'the server to see the retry');
    await screen.findByText('retrying: closed … forbidden');

    refusedTenants.delete(auth.tenantId!);
    fireEvent.click(screen.getByRole('button', { name: 'retry' }));
    await screen.findByText('retrying: live 7');
    expect(callsOf(auth)).toHaveLength(3);
    unmount();

    // Refused again, then allowed: a component mounted next to the ended one reopens it.
    const other = newIdentity();
    refusedTenants.add(other.tenantId!);
    function Later() {
      const [shown, setShown] = useState(false);
      const { status } = live.useLiveQuery('liveCount', {}, { enabled: shown });
      return <button onClick={() => setShown(true)}>{`later: ${status}`}</button>;
    }
    render(
      <FwProviderForLive auth={other}>
        <Retrying />
        <Later />
      </FwProviderForLive>,
    );
    await screen.findByText('retrying: closed … forbidden');
    refusedTenants.delete(other.tenantId!);
    fireEvent.click(screen.getByRole('button', { name: 'later: closed' }));
    await screen.findByText('retrying: live 7');
    await screen.findByText('later: live');
    expect(callsOf(other)).toHaveLength(2);
  });
});
