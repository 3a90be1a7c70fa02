import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseSync } from 'oxc-parser';
import { afterEach, describe, expect, it } from 'vitest';
import { entryAgentRuns } from '../agent-calls.ts';
import { analyseFrontend, type GraphEntry, warmFrontend } from './analyse.ts';
import { createWebSources } from './files.ts';
import { createFrontendCache } from './parse.ts';

const entries: GraphEntry[] = [
  { name: 'createNote', kind: 'command', policy: 'user', file: 'src/commands/createNote.ts' },
  { name: 'listNotes', kind: 'query', policy: 'user', file: 'src/queries/listNotes.ts' },
  { name: 'liveNotes', kind: 'liveQuery', policy: 'user', file: 'src/queries/liveNotes.ts' },
];

const bridge = "import { createFwReact } from 'fwjs/react';\nimport { api } from '../../../src/fw/_generated/api.ts';\nexport const { FwProvider, useCommand, useQuery, useLiveQuery } = createFwReact(api);\n";
const main = [
  "import { createRoot } from 'react-dom/client';",
  "import { App } from './App.tsx';",
  "import { FwProvider } from './lib/fw.ts';",
  "createRoot(document.getElementById('root')!).render(<FwProvider apiUrl=\"\"><App /></FwProvider>);",
].join('\n');
const app = [
  "import { useCommand, useQuery, useLiveQuery } from './lib/fw.ts';",
  'export function App() {',
  "  const notes = useLiveQuery('liveNotes', {});",
  "  const list = useQuery('listNotes', {});",
  "  const create = useCommand('createNote');",
  "  return <button onClick={() => create.mutate({ title: 'x' })}>{notes.data?.length}{list.data?.length}</button>;",
  '}',
].join('\n');

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A web/ app on disk: the clean Vite layout, with files replaced or added (null removes one). */
async function webApp(files: Record<string, string | null> = {}): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'fw-frontend-'));
  dirs.push(dir);
  const all: Record<string, string | null> = { 'web/src/lib/fw.ts': bridge, 'web/src/main.tsx': main, 'web/src/App.tsx': app, ...files };
  for (const [file, content] of Object.entries(all)) {
    if (content === null) continue;
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
  return dir;
}

const located = (d: { code: string; severity: string; file: string; line: number; column: number }) => [d.code, d.severity, d.file, d.line, d.column];

describe('frontend analysis of a clean app', () => {
  it('finds hooks, the UI action, the provider and the bridge imports, with no diagnostics', async () => {
    const graph = await analyseFrontend(await webApp(), entries, { cache: createFrontendCache() });
    expect(graph.layout).toBe('vite');
    expect(graph.bridge.file).toBe('web/src/lib/fw.ts');
    expect(graph.diagnostics).toEqual([]);
    expect(graph.hooks.map((h) => [h.hook, h.entry, h.status, h.component, h.line, h.column])).toEqual([
      ['useLiveQuery', 'liveNotes', 'ok', 'web/src/App.tsx#App', 3, 17],
      ['useQuery', 'listNotes', 'ok', 'web/src/App.tsx#App', 4, 16],
      ['useCommand', 'createNote', 'ok', 'web/src/App.tsx#App', 5, 18],
    ]);
    expect(graph.actions).toEqual([expect.objectContaining({ entry: 'createNote', method: 'mutate', handler: null, event: 'onClick', element: 'button', line: 6, column: 33 })]);
    expect(graph.providers).toEqual([{ file: 'web/src/main.tsx', line: 4, column: 53, kind: 'FwProvider', props: ['apiUrl'], mode: null }]);
    expect(graph.bridgeImports.map((b) => [b.file, b.names])).toEqual([
      ['web/src/App.tsx', ['useCommand', 'useLiveQuery', 'useQuery']],
      ['web/src/main.tsx', ['FwProvider']],
    ]);
    expect(graph.routes).toEqual([expect.objectContaining({ path: '/', source: 'root', components: ['web/src/App.tsx#App'] })]);
  });

  it('gives an app without web/ an empty graph and no diagnostics', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'fw-frontend-'));
    dirs.push(dir);
    const graph = await analyseFrontend(dir, entries, { cache: createFrontendCache() });
    expect(graph).toMatchObject({ layout: 'none', bridge: { file: null, expected: [] }, files: [], hooks: [], routes: [], diagnostics: [] });
  });
});

describe('frontend diagnostics', () => {
  it('raw_runtime_fetch: fetch, template literals, axios and EventSource to runtime paths', async () => {
    const dir = await webApp({
      'web/src/raw.ts': [
        "import axios from 'axios';",
        "export const a = () => fetch('/commands/createNote', { method: 'POST' });",
        'export const b = (base: string) => fetch(`${base}/queries/listNotes`);',
        "export const c = () => axios.post('/external/billing/commands/charge', {});",
        "export const d = () => new EventSource('/live/liveNotes');",
        "export const fine = () => fetch('/health');",
      ].join('\n'),
    });
    const graph = await analyseFrontend(dir, entries, { cache: createFrontendCache() });
    expect(graph.diagnostics.map(located)).toEqual([
      ['raw_runtime_fetch', 'error', 'web/src/raw.ts', 2, 24],
      ['raw_runtime_fetch', 'error', 'web/src/raw.ts', 3, 36],
      ['raw_runtime_fetch', 'error', 'web/src/raw.ts', 4, 24],
      ['raw_runtime_fetch', 'error', 'web/src/raw.ts', 5, 24],
    ]);
    expect(graph.diagnostics[0]).toMatchObject({ suggestedCommand: 'fw do connect-ui', hint: expect.stringContaining("useCommand('createNote')"), path: 'web/src/raw.ts:2:24' });
    expect(graph.rawFetches.map((f) => [f.api, f.url])).toEqual([
      ['fetch', '/commands/createNote'], ['fetch', '…/queries/listNotes'], ['axios.post', '/external/billing/commands/charge'], ['EventSource', '/live/liveNotes'],
    ]);
  });

  it('deep_generated_import: a component importing from _generated/', async () => {
    const dir = await webApp({ 'web/src/Deep.tsx': "import { api } from '../../src/fw/_generated/api.ts';\nexport const n = Object.keys(api);\n" });
    const graph = await analyseFrontend(dir, entries, { cache: createFrontendCache() });
    expect(graph.diagnostics.map(located)).toEqual([['deep_generated_import', 'error', 'web/src/Deep.tsx', 1, 21]]);
    expect(graph.diagnostics[0]!.hint).toContain("from './lib/fw.ts'");
  });

  it('missing_bridge: no web/src/lib/fw.ts in a Vite app', async () => {
    const dir = await webApp({ 'web/src/lib/fw.ts': null, 'web/src/main.tsx': "import { FwProvider } from 'fwjs/react';\nexport const p = <FwProvider apiUrl=\"\" />;\n", 'web/src/App.tsx': 'export const x = 1;\n' });
    const graph = await analyseFrontend(dir, [], { cache: createFrontendCache() });
    expect(graph.diagnostics.map(located)).toEqual([['missing_bridge', 'error', 'web/src/lib/fw.ts', 1, 1]]);
  });

  it('missing_provider: no FwProvider (Vite) and no fw plugin (Nuxt)', async () => {
    const vite = await analyseFrontend(await webApp({ 'web/src/main.tsx': "import { App } from './App.tsx';\ncreateRoot(root).render(<App />);\n" }), entries, { cache: createFrontendCache() });
    expect(vite.diagnostics.map(located)).toEqual([['missing_provider', 'error', 'web/src/main.tsx', 1, 1]]);
    const nuxt = await analyseFrontend(
      await webApp({ 'web/src/lib/fw.ts': null, 'web/src/main.tsx': null, 'web/src/App.tsx': null, 'web/nuxt.config.ts': 'export default {};\n', 'web/composables/fw.ts': 'export const x = 1;\n' }),
      [],
      { cache: createFrontendCache() },
    );
    expect(nuxt.layout).toBe('nuxt');
    expect(nuxt.diagnostics.map(located)).toEqual([['missing_provider', 'error', 'web/plugins/fw.client.ts', 1, 1]]);
  });

  it('orphan_ui_action: a hook naming a missing entry or one of the wrong kind', async () => {
    const dir = await webApp({
      'web/src/Orphans.tsx': [
        "import { useCommand, useLiveQuery } from './lib/fw.ts';",
        'export function Orphans() {',
        "  const create = useCommand('createNotes');",
        "  const live = useLiveQuery('listNotes', {});",
        '  return <form onSubmit={() => create.mutate({})}>{live.data}</form>;',
        '}',
      ].join('\n'),
    });
    const graph = await analyseFrontend(dir, entries, { cache: createFrontendCache() });
    expect(graph.diagnostics.map(located)).toEqual([
      ['orphan_ui_action', 'error', 'web/src/Orphans.tsx', 3, 18],
      ['orphan_ui_action', 'error', 'web/src/Orphans.tsx', 4, 16],
    ]);
    expect(graph.diagnostics[0]!.message).toContain('UI action');
    expect(graph.diagnostics[0]!.hint).toContain("Did you mean 'createNote'?");
    expect(graph.diagnostics[1]!.message).toContain('listNotes is a query');
    expect(graph.diagnostics[1]!.hint).toBe("Use useQuery('listNotes', args).");
    expect(graph.hooks.filter((h) => h.status !== 'ok').map((h) => h.status)).toEqual(['missing_entry', 'wrong_kind']);
  });

  it('a paginated live query (usePaginatedLiveQuery) is a UI path to its liveQuery', async () => {
    const dir = await webApp({
      'web/src/lib/fw.ts': bridge.replace('useLiveQuery }', 'useLiveQuery, usePaginatedLiveQuery }'),
      'web/src/Pages.tsx': [
        "import { usePaginatedLiveQuery } from './lib/fw.ts';",
        'export function Pages() {',
        "  const pages = usePaginatedLiveQuery('pagedNotes', {}, { pageSize: 10 });",
        '  return <button onClick={() => pages.loadMore()}>{pages.results.length}</button>;',
        '}',
      ].join('\n'),
    });
    const graph = await analyseFrontend(dir, [...entries, { name: 'pagedNotes', kind: 'liveQuery', policy: 'user', file: 'src/queries/pagedNotes.ts' }], { cache: createFrontendCache() });
    expect(graph.diagnostics).toEqual([]);
    expect(graph.hooks.filter((h) => h.entry === 'pagedNotes').map((h) => [h.hook, h.status, h.component])).toEqual([['usePaginatedLiveQuery', 'ok', 'web/src/Pages.tsx#Pages']]);
  });

  it('entry_without_ui: an info for each entry no hook reaches', async () => {
    const graph = await analyseFrontend(await webApp(), [...entries, { name: 'deleteNote', kind: 'command', policy: 'user', file: 'src/commands/deleteNote.ts' }, { name: 'cron', kind: 'command', policy: 'system', file: 'src/commands/cron.ts' }], { cache: createFrontendCache() });
    expect(graph.diagnostics.map(located)).toEqual([['entry_without_ui', 'info', 'src/commands/deleteNote.ts', 1, 1]]);
  });

  it('server_import_in_frontend: fw, node builtins, drivers and backend files; type-only imports pass', async () => {
    const dir = await webApp({
      'web/src/Server.tsx': [
        "import { command } from 'fwjs';",
        "import { readFile } from 'node:fs/promises';",
        "import { Kysely } from 'kysely';",
        "import createNote from '../../src/commands/createNote.ts';",
        "import type schema from '../../src/fw/schema.ts';",
        'export const all = [command, readFile, Kysely, createNote] as unknown as typeof schema;',
      ].join('\n'),
      // Config files run in Node: their imports are fine.
      'web/vite.config.ts': "import path from 'node:path';\nexport default { root: path.resolve('.') };\n",
    });
    const graph = await analyseFrontend(dir, entries, { cache: createFrontendCache() });
    expect(graph.diagnostics.map(located)).toEqual([
      ['server_import_in_frontend', 'error', 'web/src/Server.tsx', 1, 25],
      ['server_import_in_frontend', 'error', 'web/src/Server.tsx', 2, 26],
      ['server_import_in_frontend', 'error', 'web/src/Server.tsx', 3, 24],
      ['server_import_in_frontend', 'error', 'web/src/Server.tsx', 4, 24],
    ]);
    expect(graph.diagnostics[3]!.message).toContain('backend code in src/commands/createNote.ts');
  });

  it('agent_in_disallowed_context: agent runs in web code and in command/query files', async () => {
    const dir = await webApp({
      'web/src/Agent.tsx': [
        "import { generateText, DefaultChatTransport } from 'ai';",
        'export async function ask(ctx: any) {',
        '  await ctx.agent.run({ prompt: "hi" });',
        '  return [generateText, DefaultChatTransport];',
        '}',
      ].join('\n'),
      'src/commands/createNote.ts': "import { command } from 'fwjs';\nexport default command({ handler: async (ctx) => {\n  await ctx.ai.runAgent('helper', {});\n} });\n",
      'src/queries/listNotes.ts': "import { query } from 'fwjs';\nexport default query({ handler: (ctx) => ctx.db.selectFrom('notes').selectAll().execute() });\n",
    });
    const graph = await analyseFrontend(dir, entries, { cache: createFrontendCache() });
    expect(graph.diagnostics.map(located)).toEqual([
      ['agent_in_disallowed_context', 'error', 'web/src/Agent.tsx', 1, 52],
      ['agent_in_disallowed_context', 'error', 'web/src/Agent.tsx', 3, 9],
    ]);
    const backend = (await Promise.all(entries.filter((e) => e.name !== 'liveNotes').map(async (e) => {
      const source = await readFile(path.join(dir, e.file), 'utf8');
      return entryAgentRuns(e, source, parseSync(e.file, source));
    }))).flat();
    expect(backend.map(located)).toEqual([['agent_in_disallowed_context', 'error', 'src/commands/createNote.ts', 3, 9]]);
    expect(backend[0]!.message).toContain('ctx.ai.runAgent');
  });

  it('parse_error: a file oxc cannot parse', async () => {
    const graph = await analyseFrontend(await webApp({ 'web/src/Broken.tsx': 'export const a = 1;\nexport function B( {\n' }), entries, { cache: createFrontendCache() });
    expect(graph.diagnostics.map((d) => [d.code, d.file, d.line])).toEqual([['parse_error', 'web/src/Broken.tsx', 3]]);
  });
});

describe('.vue files', () => {
  it('reads <script setup> and template handlers, with positions in the .vue file', async () => {
    const page = [
      '<template>',
      '  <form @submit.prevent="add">',
      '    <NoteList />',
      '    <button @click="mutate({ title })">Add</button>',
      '  </form>',
      '</template>',
      '',
      '<script setup lang="ts">',
      "import { api } from '~/composables/fw';",
      'const { mutate } = useFwCommand(api.commands.createNote);',
      'const notes = useFwLiveQuery(api.liveQueries.liveNotes, {});',
      "async function add() { await mutate({ title: 'x' }); }",
      "const bad = () => fetch('/queries/listNotes');",
      '</script>',
    ].join('\n');
    const dir = await webApp({
      'web/src/lib/fw.ts': null, 'web/src/main.tsx': null, 'web/src/App.tsx': null,
      'web/nuxt.config.ts': 'export default {};\n',
      'web/composables/fw.ts': "export { api } from '../../src/fw/_generated/api.ts';\n",
      'web/plugins/fw.client.ts': 'export default () => {};\n',
      'web/plugins/fw.server.ts': 'export default () => {};\n',
      'web/pages/notes/index.vue': page,
      'web/components/NoteList.vue': '<template><ul /></template>\n<script setup lang="ts">\nconst list = useFwQuery(api.queries.listNotes, {});\n</script>\n',
    });
    const graph = await analyseFrontend(dir, entries, { cache: createFrontendCache() });
    expect(graph.layout).toBe('nuxt');
    expect(graph.hooks.map((h) => [h.file, h.line, h.column, h.hook, h.entry, h.status, h.component, h.routes])).toEqual([
      ['web/components/NoteList.vue', 3, 14, 'useFwQuery', 'listNotes', 'ok', 'web/components/NoteList.vue#NoteList', ['/notes']],
      ['web/pages/notes/index.vue', 10, 20, 'useFwCommand', 'createNote', 'ok', 'web/pages/notes/index.vue#Index', ['/notes']],
      ['web/pages/notes/index.vue', 11, 15, 'useFwLiveQuery', 'liveNotes', 'ok', 'web/pages/notes/index.vue#Index', ['/notes']],
    ]);
    expect(graph.actions.map((a) => [a.line, a.column, a.handler, a.event, a.element])).toEqual([
      [4, 21, null, 'click', 'button'],
      [12, 30, 'add', 'submit', 'form'],
    ]);
    expect(graph.routes.map((r) => [r.path, r.source])).toEqual([['/notes', 'nuxt-pages']]);
    expect(graph.providers.map((p) => [p.kind, p.mode])).toEqual([['nuxt-plugin', 'client'], ['nuxt-plugin', 'server']]);
    expect(graph.diagnostics.map(located)).toEqual([['raw_runtime_fetch', 'error', 'web/pages/notes/index.vue', 13, 19]]);
  });
});

describe('parsing a large web/ on a worker thread', () => {
  it('gives the same graph as parsing on the main thread', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 240; i++) {
      files[`web/src/parts/Part${i}.tsx`] = `import { useCommand, useQuery } from '../lib/fw.ts';\nexport function Part${i}() {\n  const list = useQuery('listNotes', {});\n  const create = useCommand('createNote');\n  return <form onSubmit={() => create.mutate({ title: '${i}' })}>{String(list.data)}</form>;\n}\n`;
    }
    const dir = await webApp(files);
    const viaWorker = createFrontendCache();
    const sources = createWebSources(dir);
    expect(await warmFrontend(dir, { cache: viaWorker, sources })).toEqual({ parsedInWorker: 243 });
    const parsesAfterWarm = viaWorker.parses;
    const graph = await analyseFrontend(dir, entries, { cache: viaWorker, sources });
    expect(viaWorker.parses).toBe(parsesAfterWarm); // the analysis found every file parsed
    const onMainThread = await analyseFrontend(dir, entries, { cache: createFrontendCache() });
    expect(JSON.stringify(graph)).toBe(JSON.stringify(onMainThread));
    expect(graph.actions.filter((a) => a.file.startsWith('web/src/parts/'))).toHaveLength(240);
  });
});

describe('incremental analysis', () => {
  it('after each kind of edit, the graph built incrementally equals one built from scratch', async () => {
    const page = (title: string, child: string) => `import { useQuery } from '../lib/fw.ts';\nimport { ${child} } from './${child}.tsx';\nexport function Page() {\n  const q = useQuery('listNotes', {});\n  return <section>{title}{String(q.data)}<${child} /></section>;\n}\n`.replace('{title}', title);
    const part = (name: string, entry: string) => `import { useCommand } from '../lib/fw.ts';\nexport function ${name}() {\n  const c = useCommand('${entry}');\n  return <button onClick={() => c.mutate({ title: 'x' })}>go</button>;\n}\n`;
    const routes = (path: string) => `import { Page } from './parts/Page.tsx';\nexport const routes = [{ path: '${path}', element: <Page /> }];\n`;
    const dir = await webApp({ 'web/src/routes.tsx': routes('/notes'), 'web/src/parts/Page.tsx': page('a', 'Part'), 'web/src/parts/Part.tsx': part('Part', 'createNote') });
    const cache = createFrontendCache();
    const sources = createWebSources(dir);
    const write = async (file: string, content: string | null) => {
      if (content === null) await rm(path.join(dir, file));
      else await writeFile(path.join(dir, file), content);
      sources.changed(file);
    };
    const same = async (what: string) => {
      const incremental = await analyseFrontend(dir, entries, { cache, sources });
      const fresh = await analyseFrontend(dir, entries, { cache: createFrontendCache() });
      expect(JSON.stringify(incremental), what).toBe(JSON.stringify(fresh));
      return incremental;
    };
    await same('the first build');
    await write('web/src/parts/Page.tsx', page('b', 'Part'));
    await same('a markup edit');
    await write('web/src/parts/Part.tsx', part('Part', 'missingEntry'));
    expect((await same('a hook naming another entry')).hooks.find((h) => h.file === 'web/src/parts/Part.tsx')?.status).toBe('missing_entry');
    await write('web/src/parts/Other.tsx', part('Other', 'createNote'));
    await write('web/src/parts/Page.tsx', page('b', 'Other'));
    expect((await same('a new component rendered instead')).components.find((c) => c.name === 'Other')?.routes).toEqual(['/notes']);
    await write('web/src/parts/Other.tsx', part('Renamed', 'createNote'));
    expect((await same('the rendered component renamed away')).components.find((c) => c.name === 'Renamed')?.routes).toEqual([]);
    await write('web/src/routes.tsx', routes('/all-notes'));
    await same('a route path changed');
    await write('web/src/parts/Part.tsx', null);
    await same('a file removed');
    // The same files with other entries (a backend reload) link again.
    const others = entries.filter((e) => e.name !== 'listNotes');
    const relinked = await analyseFrontend(dir, others, { cache, sources });
    expect(JSON.stringify(relinked)).toBe(JSON.stringify(await analyseFrontend(dir, others, { cache: createFrontendCache() })));
    expect(relinked.hooks.find((h) => h.entry === 'listNotes')?.status).toBe('missing_entry');
  });

  it('parses only the changed file again', async () => {
    const dir = await webApp({ 'web/src/Other.tsx': 'export function Other() { return null; }\n' });
    const cache = createFrontendCache();
    await analyseFrontend(dir, entries, { cache });
    expect(cache.parses).toBe(4);
    await analyseFrontend(dir, entries, { cache });
    expect(cache.parses).toBe(4);
    await writeFile(path.join(dir, 'web/src/Other.tsx'), "import { useQuery } from './lib/fw.ts';\nexport function Other() { useQuery('nope', {}); return null; }\n");
    const graph = await analyseFrontend(dir, entries, { cache });
    expect(cache.parses).toBe(5);
    expect(graph.diagnostics.map(located)).toEqual([['orphan_ui_action', 'error', 'web/src/Other.tsx', 2, 27]]);
  });

  it('reuses the graph after an edit the analysis does not see, and rebuilds it after one it does', async () => {
    const other = (text: string) => `import { useQuery } from './lib/fw.ts';\nexport function Other() {\n  const q = useQuery('listNotes', {});\n  return <p>${text}{String(q.data)}</p>;\n}\n`;
    const dir = await webApp({ 'web/src/Other.tsx': other('first') });
    const cache = createFrontendCache();
    const sources = createWebSources(dir);
    const first = await analyseFrontend(dir, entries, { cache, sources });

    await writeFile(path.join(dir, 'web/src/Other.tsx'), other('second, longer text'));
    sources.changed('web/src/Other.tsx');
    const afterMarkup = await analyseFrontend(dir, entries, { cache, sources });
    expect(cache.parses).toBe(5); // parsed again…
    expect(afterMarkup).toBe(first); // …but nothing it records changed: the same graph

    await writeFile(path.join(dir, 'web/src/Other.tsx'), `\n${other('second, longer text')}`);
    sources.changed('web/src/Other.tsx');
    const moved = await analyseFrontend(dir, entries, { cache, sources });
    expect(moved).not.toBe(first); // the hook moved a line down
    expect(moved.hooks.find((h) => h.file === 'web/src/Other.tsx')).toMatchObject({ line: 4, entry: 'listNotes' });

    // Another set of entries (a backend reload) is a new graph too.
    expect(await analyseFrontend(dir, [...entries], { cache, sources })).not.toBe(moved);
  });
});
