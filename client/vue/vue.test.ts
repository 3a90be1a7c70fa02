// @vitest-environment happy-dom
import { flushPromises, mount, type VueWrapper } from '@vue/test-utils';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp, defineComponent, effectScope, h, reactive, ref } from 'vue';
import { z } from 'zod';
import { createDatabase, type FwDatabase } from '../../runtime/db/database.ts';
import { applyMigration, ensureSystemTables } from '../../runtime/db/migrate.ts';
import { command, liveQuery, query } from '../../runtime/core/entries.ts';
import { paginate, paginationArgs } from '../../runtime/core/paginate.ts';
import { createRuntimeHandler } from '../../runtime/http/handler.ts';
import { createLiveHub, type LiveHub } from '../../runtime/live/hub.ts';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import { defineSchema, t, table } from '../../runtime/core/schema.ts';
import type { EntryRef } from '../api-types.ts';
import type { DevAuth } from '../client.ts';
import { createFwVue, fwPlugin, useFwQuery as useQueryByRef } from './index.ts';

// happy-dom pages live on this origin, so calls to the runtime are cross-origin, as in a real app.
const PAGE_ORIGIN = 'http://localhost:3000';

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
  listTags: query({ handler: (ctx) => ctx.db.selectFrom('tags').selectAll().execute() }),
  liveNotes: liveQuery({ handler: (ctx) => ctx.db.selectFrom('notes').select('title').orderBy('title').execute() }),
  pagedNotes: liveQuery({
    args: { page: paginationArgs },
    handler: (ctx, args) => paginate(ctx.db.selectFrom('notes').select(['id', 'title']), { orderBy: [['title', 'asc'], ['id', 'asc']] }, args),
  }),
  liveSearch: liveQuery({
    args: { prefix: z.string() },
    handler: (ctx, args) => ctx.db.selectFrom('notes').select('title').where('title', 'like', `${args.prefix}%`).orderBy('title').execute(),
  }),
};

// Written by hand in the generator's shape (src/fw/_generated/api.ts).
const api = {
  commands: {
    createNote: { kind: 'command', name: 'createNote', reads: [], writes: ['notes'] } as EntryRef<'command', typeof entries.createNote>,
  },
  queries: {
    listNotes: { kind: 'query', name: 'listNotes', reads: ['notes'], writes: [] } as EntryRef<'query', typeof entries.listNotes>,
    findNotes: { kind: 'query', name: 'findNotes', reads: ['notes'], writes: [] } as EntryRef<'query', typeof entries.findNotes>,
    listTags: { kind: 'query', name: 'listTags', reads: ['tags'], writes: [] } as EntryRef<'query', typeof entries.listTags>,
  },
  liveQueries: {
    liveNotes: { kind: 'liveQuery', name: 'liveNotes', reads: ['notes'], writes: [] } as EntryRef<'liveQuery', typeof entries.liveNotes>,
    liveSearch: { kind: 'liveQuery', name: 'liveSearch', reads: ['notes'], writes: [] } as EntryRef<'liveQuery', typeof entries.liveSearch>,
    pagedNotes: { kind: 'liveQuery', name: 'pagedNotes', reads: ['notes'], writes: [] } as EntryRef<'liveQuery', typeof entries.pagedNotes>,
  },
} as const;

const fw = createFwVue(api);

const NoteList = defineComponent({
  props: { label: { type: String, default: 'notes' } },
  setup(props) {
    const { data, error, isLoading } = fw.useFwQuery('listNotes', {});
    return () =>
      isLoading.value
        ? h('p', `loading ${props.label}`)
        : error.value
          ? h('p', `error ${error.value.code}`)
          : h('ul', { 'aria-label': props.label }, data.value?.map((note) => h('li', { key: note.id }, note.title)));
  },
});

const TagCount = defineComponent({
  setup() {
    // By ref, through the composables that need no bound api.
    const { data } = useQueryByRef(api.queries.listTags, {});
    return () => h('p', { class: 'tags' }, `tags: ${data.value ? data.value.length : '…'}`);
  },
});

const NewNote = defineComponent({
  props: { title: { type: String, required: true } },
  setup(props) {
    const { mutate, data, error, isPending } = fw.useFwCommand(api.commands.createNote);
    return () =>
      h('div', [
        h('button', { class: 'add', onClick: () => mutate({ title: props.title }) }, 'add'),
        isPending.value ? h('p', 'saving') : null,
        data.value ? h('p', { class: 'saved' }, `saved ${data.value.title}`) : null,
        error.value ? h('p', { role: 'alert' }, `${error.value.code}: ${error.value.diagnostics.map((d) => d.path).join(',')}`) : null,
      ]);
  },
});

const LiveNotes = defineComponent({
  props: { label: { type: String, required: true } },
  setup(props) {
    const { data, status, revision } = fw.useFwLiveQuery(api.liveQueries.liveNotes, {});
    return () => h('p', { class: props.label }, `${status.value} ${data.value ? data.value.map((n) => n.title).join(',') : '…'} @${revision.value ?? '-'}`);
  },
});

describe('fw/vue against a running runtime', () => {
  let db: FwDatabase;
  let hub: LiveHub;
  let server: Server;
  let url: string;
  // Per tenant, so each test counts only its own requests: "<tenant> /queries/listNotes" → n.
  const requests = new Map<string, number>();
  const open = new Map<string, number>();
  const wrappers: VueWrapper[] = [];

  beforeAll(async () => {
    db = await createDatabase({ dataDir: 'memory://' });
    await ensureSystemTables(db);
    const app: AppDefinition = { entries: new Map(Object.entries(entries)), policies: {}, schema };
    expect((await applyMigration(db, schema)).blocked).toEqual([]);
    hub = createLiveHub(db, { dev: true, pollIntervalMs: 100, pruneIntervalMs: 0 });
    hub.setApp(app);
    await hub.start();
    const handler = createRuntimeHandler({ app, db, dev: true, live: hub, cors: { origins: [PAGE_ORIGIN] } });
    server = createServer((req, res) => {
      const call = `${req.headers['x-fw-tenant-id']} ${req.url}`;
      if (req.method === 'POST') {
        requests.set(call, (requests.get(call) ?? 0) + 1);
        open.set(call, (open.get(call) ?? 0) + 1);
        res.on('close', () => open.set(call, open.get(call)! - 1));
      }
      handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const wrapper of wrappers) wrapper.unmount();
    await hub?.close();
    server?.closeAllConnections();
    server?.close();
    await db?.close();
  });

  afterEach(() => {
    for (const wrapper of wrappers.splice(0)) wrapper.unmount();
  });

  const newIdentity = (): DevAuth => ({ userId: 'alice', tenantId: randomUUID(), role: 'member' });
  const count = (auth: DevAuth, path: string) => requests.get(`${auth.tenantId} ${path}`) ?? 0;
  const openCount = (auth: DevAuth, path: string) => open.get(`${auth.tenantId} ${path}`) ?? 0;

  function mountWith(auth: DevAuth, render: () => ReturnType<typeof h>) {
    const wrapper = mount(defineComponent({ setup: () => render }), { global: { plugins: [[fw, { apiUrl: url, devAuth: auth }]] } });
    wrappers.push(wrapper);
    return wrapper;
  }

  async function until(check: () => void): Promise<void> {
    await vi.waitFor(async () => {
      await flushPromises();
      check();
    }, { timeout: 30_000, interval: 20 });
  }

  it('after a command, refetches mounted queries that read what it wrote, and only those', async () => {
    const auth = newIdentity();
    const wrapper = mountWith(auth, () => h('div', [h(NoteList), h(TagCount), h(NewNote, { title: 'hello' })]));
    await until(() => expect(wrapper.find('ul[aria-label="notes"]').exists()).toBe(true));
    await until(() => expect(wrapper.find('.tags').text()).toBe('tags: 0'));

    await wrapper.find('button.add').trigger('click');
    await until(() => expect(wrapper.find('.saved').text()).toBe('saved hello'));
    expect(wrapper.findAll('li').map((li) => li.text())).toEqual(['hello']);
    expect(count(auth, '/commands/createNote')).toBe(1);
    expect(count(auth, '/queries/listNotes')).toBe(2);
    expect(count(auth, '/queries/listTags')).toBe(1);
  });

  it('puts a failed command in error state with its diagnostics; mutateAsync rejects with FwError', async () => {
    const auth = newIdentity();
    const wrapper = mountWith(auth, () => h(NewNote, { title: '' }));
    await wrapper.find('button.add').trigger('click');
    await until(() => expect(wrapper.find('[role="alert"]').text()).toBe('validation_failed: args.title'));
  });

  it('shares one request between identical queries, whatever form their args take', async () => {
    const auth = newIdentity();
    const Finder = defineComponent({
      props: { form: { type: String, required: true } },
      setup(props) {
        const prefix = ref('x');
        const args =
          props.form === 'getter' ? () => ({ prefix: prefix.value, limit: 5 }) : props.form === 'reactive' ? reactive({ limit: 5, prefix: 'x' }) : { prefix: 'x', limit: 5 };
        const { data } = fw.useFwQuery('findNotes', args);
        return () => h('p', { class: `found-${props.form}` }, `found: ${data.value ? data.value.length : '…'}`);
      },
    });
    const wrapper = mountWith(auth, () =>
      h('div', [h(NoteList, { label: 'first' }), h(NoteList, { label: 'second' }), ...['plain', 'getter', 'reactive'].map((form) => h(Finder, { form }))]),
    );
    await until(() => expect(wrapper.findAll('ul')).toHaveLength(2));
    await until(() => expect(wrapper.findAll('p').map((p) => p.text())).toEqual(['found: 0', 'found: 0', 'found: 0']));
    expect(count(auth, '/queries/listNotes')).toBe(1);
    expect(count(auth, '/queries/findNotes')).toBe(1);
  });

  it('refetches when reactive args change: a ref in a getter, a reactive object, and holds back while disabled', async () => {
    const auth = newIdentity();
    const prefix = ref('a');
    const search = reactive({ prefix: 'a', limit: 5 });
    const enabled = ref(false);
    const Search = defineComponent({
      setup() {
        const byGetter = fw.useFwQuery('findNotes', () => ({ prefix: prefix.value, limit: 5 }));
        const byReactive = fw.useFwQuery('findNotes', search);
        const gated = fw.useFwQuery('listTags', {}, { enabled });
        const titles = (data: { title: string }[] | undefined) => (data ? data.map((n) => n.title).join(',') : '…');
        return () =>
          h('div', [
            h('p', { class: 'getter' }, titles(byGetter.data.value)),
            h('p', { class: 'reactive' }, titles(byReactive.data.value)),
            h('p', { class: 'gated' }, gated.isLoading.value ? 'loading' : gated.data.value ? `tags ${gated.data.value.length}` : 'idle'),
          ]);
      },
    });
    const wrapper = mountWith(auth, () => h(Search));
    const client = (wrapper.vm as unknown as { $: { appContext: { app: { runWithContext<T>(fn: () => T): T } } } }).$.appContext.app.runWithContext(() => fw.useFwClient());
    await client.command('createNote', { title: 'apple' });
    await client.command('createNote', { title: 'banana' });
    await until(() => expect(wrapper.find('.getter').text()).not.toBe('…'));
    // The first load may predate the writes above; the command through the client does not invalidate.
    await until(() => expect(count(auth, '/queries/findNotes')).toBe(1));

    prefix.value = 'b';
    await until(() => expect(wrapper.find('.getter').text()).toBe('banana'));
    search.prefix = 'b';
    await until(() => expect(wrapper.find('.reactive').text()).toBe('banana'));
    // Both now ask for { prefix: 'b', limit: 5 }: one request between them.
    expect(count(auth, '/queries/findNotes')).toBe(2);

    expect(wrapper.find('.gated').text()).toBe('idle');
    expect(count(auth, '/queries/listTags')).toBe(0);
    enabled.value = true;
    await until(() => expect(wrapper.find('.gated').text()).toBe('tags 0'));
    expect(count(auth, '/queries/listTags')).toBe(1);
  });

  it('useFwLiveQuery: data pushed on writes, identical subscriptions on one POST /live stream, closed on unmount', async () => {
    const auth = newIdentity();
    const shown = ref(true);
    const wrapper = mountWith(auth, () =>
      h('div', [shown.value ? h('div', [h(LiveNotes, { label: 'one' }), h(LiveNotes, { label: 'two' })]) : null, h(NewNote, { title: 'pushed' })]),
    );
    await until(() => expect(wrapper.find('.one').text()).toMatch(/^live  @\d+$/));
    expect(wrapper.find('.two').text()).toBe(wrapper.find('.one').text());

    await wrapper.find('button.add').trigger('click');
    await until(() => expect(wrapper.find('.one').text()).toMatch(/^live pushed @\d+$/));
    await until(() => expect(wrapper.find('.two').text()).toMatch(/^live pushed @\d+$/));
    expect(count(auth, '/live')).toBe(1);
    expect(openCount(auth, '/live')).toBe(1);

    shown.value = false;
    await until(() => expect(openCount(auth, '/live')).toBe(0));
    expect(count(auth, '/live')).toBe(1);
  });

  // happy-dom may report a stream closed twice here (see vitest.config.ts onUnhandledError).
  it('useFwPaginatedLiveQuery loads pages that stay live; useFwCommand({ optimistic }) shows a note at once and rolls back a failure', async () => {
    const auth = newIdentity();
    const Paged = defineComponent({
      setup() {
        const { results, loadMore, status } = fw.useFwPaginatedLiveQuery('pagedNotes', {}, { pageSize: 2 });
        const create = fw.useFwCommand('createNote', {
          optimistic: (store, args) => store.setLive('liveNotes', {}, (notes) => [...notes, { title: `${args.title}…` }]),
        });
        const live = fw.useFwLiveQuery('liveNotes', {});
        return () =>
          h('div', [
            h('p', { class: 'paged' }, `${status.value}: ${results.value.map((note) => note.title).join(',')}`),
            h('p', { class: 'live' }, live.data.value ? live.data.value.map((note) => note.title).join(',') : '…'),
            h('button', { class: 'more', onClick: () => loadMore() }, 'more'),
            h('button', { class: 'ok', onClick: () => create.mutate({ title: 'n5' }) }, 'ok'),
            // An empty title fails validation: the optimistic note goes again.
            h('button', { class: 'bad', onClick: () => create.mutate({ title: '' }) }, 'bad'),
          ]);
      },
    });
    const headers = { 'content-type': 'application/json', 'x-fw-user-id': auth.userId, 'x-fw-tenant-id': auth.tenantId, 'x-fw-role': auth.role };
    for (const title of ['n1', 'n2', 'n3', 'n4']) {
      await fetch(`${url}/commands/createNote`, { method: 'POST', headers, body: JSON.stringify({ args: { title } }) });
    }
    const wrapper = mountWith(auth, () => h(Paged));
    await until(() => expect(wrapper.find('.paged').text()).toBe('canLoadMore: n1,n2'));
    await wrapper.find('button.more').trigger('click');
    await until(() => expect(wrapper.find('.paged').text()).toBe('exhausted: n1,n2,n3,n4'));
    await until(() => expect(wrapper.find('.live').text()).toBe('n1,n2,n3,n4'));

    await wrapper.find('button.bad').trigger('click');
    expect(wrapper.find('.live').text()).toBe('n1,n2,n3,n4,…');
    await until(() => expect(wrapper.find('.live').text()).toBe('n1,n2,n3,n4'));

    await wrapper.find('button.ok').trigger('click');
    expect(wrapper.find('.live').text()).toBe('n1,n2,n3,n4,n5…');
    await until(() => expect(wrapper.find('.live').text()).toBe('n1,n2,n3,n4,n5'));
    // The last page was open-ended (nothing after it) at size 2: a third row makes it hold its end,
    // and the new row comes with the next page.
    await until(() => expect(wrapper.find('.paged').text()).toBe('canLoadMore: n1,n2,n3,n4'));
    await wrapper.find('button.more').trigger('click');
    await until(() => expect(wrapper.find('.paged').text()).toBe('exhausted: n1,n2,n3,n4,n5'));
  });

  it('useFwLiveQuery re-subscribes when its args change, on the one stream of the app', async () => {
    const auth = newIdentity();
    const prefix = ref('k');
    const Live = defineComponent({
      setup() {
        const { data } = fw.useFwLiveQuery('liveSearch', () => ({ prefix: prefix.value }));
        return () => h('p', { class: 'search' }, data.value ? data.value.map((n) => n.title).join(',') || 'none' : '…');
      },
    });
    const wrapper = mountWith(auth, () => h('div', [h(Live), h(NewNote, { title: 'kiwi' })]));
    await until(() => expect(wrapper.find('.search').text()).toBe('none'));
    await wrapper.find('button.add').trigger('click');
    await until(() => expect(wrapper.find('.search').text()).toBe('kiwi'));
    prefix.value = 'z';
    await until(() => expect(wrapper.find('.search').text()).toBe('none'));
    // The stream is reopened with the new subscription set; never more than one at a time.
    await until(() => expect(openCount(auth, '/live')).toBe(1));
    wrapper.unmount();
    wrappers.splice(wrappers.indexOf(wrapper), 1);
    await until(() => expect(openCount(auth, '/live')).toBe(0));
  });

  it('stops when its effect scope is disposed, outside any component', async () => {
    const auth = newIdentity();
    const app = createApp({ render: () => null });
    app.use(fwPlugin, { api, apiUrl: url, devAuth: auth });
    const scope = effectScope();
    const live = app.runWithContext(() => scope.run(() => fw.useFwLiveQuery(api.liveQueries.liveNotes, {})))!;
    await until(() => expect(live.status.value).toBe('live'));
    expect(Array.isArray(live.data.value)).toBe(true);
    expect(openCount(auth, '/live')).toBe(1);
    scope.stop();
    await until(() => expect(openCount(auth, '/live')).toBe(0));
  });

  it('names the fix when the plugin is missing', () => {
    const Orphan = defineComponent({
      setup() {
        fw.useFwQuery('listNotes', {});
        return () => null;
      },
    });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(() => mount(Orphan)).toThrow(/app\.use\(fw, \{ apiUrl/);
    warn.mockRestore();
  });
});
