import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../../e2e/support/app.ts';
import type { FrontendGraphJson } from './frontend-graph.ts';
import type { CapabilityMap } from './capability-map.ts';
import { generateArtifacts, type GenerateResult } from './generate.ts';

// A notes app with a router, a layout, forms and buttons calling commands, a live list, an admin
// page behind a named policy, and one button calling an entry that does not exist. The template's own
// page (App.tsx and its NoteList) is emptied: this app's routes are the whole UI.
const files: Record<string, string> = {
  'src/policies.ts': "import { definePolicies } from 'fwjs';\nexport default definePolicies({ admin: ({ auth }) => auth.role === 'admin' });\n",
  'src/commands/deleteNote.ts': "import { command, z } from 'fwjs';\nexport default command({ policy: 'admin', args: { id: z.uuid() }, handler: (ctx, args) => ctx.db.deleteFrom('notes').where('id', '=', args.id).execute() });\n",
  'src/commands/archiveAll.ts': "import { command } from 'fwjs';\nexport default command({ handler: (ctx) => ctx.db.updateTable('notes').set({ title: 'archived' }).execute() });\n",
  'web/src/main.tsx': [
    "import { createRoot } from 'react-dom/client';",
    "import { RouterProvider, createBrowserRouter } from 'react-router';",
    "import { FwProvider } from './lib/fw.ts';",
    "import { Layout } from './Layout.tsx';",
    "import NotesPage from './pages/NotesPage.tsx';",
    "import { NoteDetail } from './pages/NoteDetail.tsx';",
    'const router = createBrowserRouter([',
    "  { path: '/', element: <Layout />, children: [",
    '    { index: true, element: <NotesPage /> },',
    "    { path: 'notes/:id', element: <NoteDetail /> },",
    '  ] },',
    ']);',
    "createRoot(document.getElementById('root')!).render(<FwProvider apiUrl=\"\"><RouterProvider router={router} /></FwProvider>);",
  ].join('\n'),
  'web/src/Layout.tsx': "export function Layout() {\n  return <main />;\n}\n",
  'web/src/pages/NotesPage.tsx': [
    "import { NoteForm } from '../components/NoteForm.tsx';",
    "import { LiveNoteList } from '../components/LiveNoteList.tsx';",
    'export default function NotesPage() {',
    '  return <section><NoteForm /><LiveNoteList /></section>;',
    '}',
  ].join('\n'),
  'web/src/components/NoteForm.tsx': [
    "import { useState } from 'react';",
    "import { useCommand } from '../lib/fw.ts';",
    'export function NoteForm() {',
    "  const [title, setTitle] = useState('');",
    "  const { mutate: create } = useCommand('createNote');",
    '  function submit(event: { preventDefault(): void }) {',
    '    event.preventDefault();',
    '    create({ title });',
    '  }',
    '  return <form onSubmit={submit}><input value={title} onChange={(e) => setTitle(e.target.value)} /></form>;',
    '}',
  ].join('\n'),
  'web/src/components/LiveNoteList.tsx': [
    "import { useLiveQuery } from '../lib/fw.ts';",
    'export function LiveNoteList() {',
    "  const notes = useLiveQuery('liveNotes', {});",
    '  return <ul>{notes.data?.map((n) => <li key={n.id}>{n.title}</li>)}</ul>;',
    '}',
  ].join('\n'),
  'web/src/pages/NoteDetail.tsx': [
    "import { useCommand } from '../lib/fw.ts';",
    'export function NoteDetail({ id }: { id: string }) {',
    "  const remove = useCommand('deleteNote');",
    "  const share = useCommand('shareNote');",
    '  return (',
    '    <div>',
    '      <button onClick={() => remove.mutate({ id })}>Delete</button>',
    '      <button onClick={() => share.mutate({ id })}>Share</button>',
    '    </div>',
    '  );',
    '}',
  ].join('\n'),
};

describe('capability map and frontend graph of a routed app', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let result: GenerateResult;
  let caps: CapabilityMap;
  let graph: FrontendGraphJson;
  beforeAll(async () => {
    app = await createTestApp('minimal-web', { ...files, 'web/src/App.tsx': 'export {};\n', 'web/src/components/NoteList.tsx': 'export {};\n' });
    result = await generateArtifacts({ root: app.dir });
    const read = async (name: string) => JSON.parse(await readFile(path.join(app.dir, 'src/fw/_generated', name), 'utf8'));
    caps = await read('capabilityMap.json');
    graph = await read('frontendGraph.json');
  });
  afterAll(() => app?.remove());

  it('records the routes and the components each renders', () => {
    expect(graph.routes.map((r) => [r.path, r.source, r.components])).toEqual([
      ['/', 'react-router', ['web/src/Layout.tsx#Layout']],
      ['/', 'react-router', ['web/src/pages/NotesPage.tsx#NotesPage']],
      ['/notes/:id', 'react-router', ['web/src/pages/NoteDetail.tsx#NoteDetail']],
    ]);
    const routesOf = Object.fromEntries(graph.components.map((c) => [c.name, c.routes]));
    expect(routesOf).toMatchObject({ NoteForm: ['/'], LiveNoteList: ['/'], NoteDetail: ['/notes/:id'], Layout: ['/'] });
  });

  it('answers: which route uses an entry', () => {
    const routesUsing = (entry: string) => [...new Set(caps.ui.paths.filter((p) => p.entry === entry).flatMap((p) => p.routes))];
    expect(routesUsing('createNote')).toEqual(['/']);
    expect(routesUsing('deleteNote')).toEqual(['/notes/:id']);
    expect(graph.entries.find((e) => e.name === 'liveNotes')?.routes).toEqual(['/']);
  });

  it('answers: which component subscribes to a liveQuery', () => {
    expect(caps.ui.paths.filter((p) => p.kind === 'liveQuery').map((p) => [p.component, p.entry])).toEqual([
      ['web/src/components/LiveNoteList.tsx#LiveNoteList', 'liveNotes'],
    ]);
  });

  it('answers: which entries have no UI path', () => {
    expect(caps.ui.entriesWithoutUi).toEqual(['archiveAll', 'findNotes', 'listNotes', 'updateNote']);
    expect(result.checks.filter((d) => d.code === 'entry_without_ui').map((d) => d.file)).toEqual(['src/commands/archiveAll.ts', 'src/commands/updateNote.ts', 'src/queries/findNotes.ts', 'src/queries/listNotes.ts']);
  });

  it('answers: which UI action points to a missing entry', () => {
    const orphans = caps.ui.paths.filter((p) => p.action !== null && p.status !== 'ok');
    expect(orphans.map((p) => [p.entry, p.status, p.action?.event, p.action?.element, p.component])).toEqual([
      ['shareNote', 'missing_entry', 'onClick', 'button', 'web/src/pages/NoteDetail.tsx#NoteDetail'],
    ]);
    expect(result.checks.filter((d) => d.code === 'orphan_ui_action').map((d) => [d.file, d.line, d.column])).toEqual([['web/src/pages/NoteDetail.tsx', 4, 17]]);
  });

  it('answers: which policy protects the entry behind a UI action', () => {
    const actions = caps.ui.paths.filter((p) => p.action !== null && p.status === 'ok');
    expect(actions.map((p) => [p.action?.handler ?? p.action?.event, p.entry, p.writes, p.policy])).toEqual([
      ['submit', 'createNote', ['notes'], 'user'],
      ['onClick', 'deleteNote', ['notes'], 'admin'],
    ]);
    expect(actions[0]!.action).toMatchObject({ event: 'onSubmit', element: 'form', method: 'mutate' });
  });

  it('puts a frontend section in agentContract.json', async () => {
    const contract = JSON.parse(await readFile(path.join(app.dir, 'src/fw/_generated/agentContract.json'), 'utf8'));
    expect(contract.frontend).toMatchObject({ layout: 'vite', bridge: 'web/src/lib/fw.ts', providers: [{ kind: 'FwProvider', file: 'web/src/main.tsx', mode: null }] });
    expect(contract.frontend.entries.find((e: { name: string }) => e.name === 'deleteNote')).toEqual({
      name: 'deleteNote', kind: 'command', components: ['web/src/pages/NoteDetail.tsx#NoteDetail'], routes: ['/notes/:id'], actions: 1,
    });
    expect(contract.frontend.diagnostics.map((d: { code: string }) => d.code)).toContain('orphan_ui_action');
  });
});
