import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, repoRoot, runFw, runNode } from './support/app.ts';

// The minimal-web template with its UI wiring broken every way connect-ui repairs: no bridge file, no
// provider, a component importing from _generated/, and a raw fetch of a command in a form handler.
const brokenMain = `import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
`;

const brokenApp = `import { type FormEvent, useState } from 'react';
import { api, type Api } from '../../src/fw/_generated/api.ts';

const commands: Api['commands'] = api.commands;

export function App() {
  const [title, setTitle] = useState('');

  async function addNote(event: FormEvent) {
    event.preventDefault();
    await fetch('/commands/createNote', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-fw-user-id': 'dev-user' },
      body: JSON.stringify({ args: { title } }),
    });
    setTitle('');
  }

  return (
    <form onSubmit={addNote}>
      <label>
        Title <input value={title} onChange={(e) => setTitle(e.target.value)} />
      </label>
      <button type="submit">Add note</button>
      <p>{Object.keys(commands).length} commands</p>
    </form>
  );
}
`;

async function snapshot(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const visit = async (rel: string) => {
    for (const entry of await readdir(path.join(dir, rel), { withFileTypes: true })) {
      const child = path.posix.join(rel, entry.name);
      if (entry.isDirectory()) await visit(child);
      else files[child] = await readFile(path.join(dir, child), 'utf8');
    }
  };
  await visit('web');
  return files;
}

// Each test gets its own broken app; a test about the repaired app runs the repair itself.
describe('fw do connect-ui on a Vite app with broken wiring', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;

  beforeEach(async () => {
    // Inside the checkout, so React and Vite resolve for the typecheck and the build.
    app = await createTestApp('minimal-web', { 'web/src/main.tsx': brokenMain, 'web/src/App.tsx': brokenApp }, { insideRepo: true });
    await rm(path.join(app.dir, 'web/src/lib/fw.ts'));
  });
  afterEach(() => app?.remove());

  /** The step a test builds on: `fw do connect-ui` on this test's broken app, fixing all four problems. */
  async function repair() {
    const run = await runFw(['do', 'connect-ui', '--json'], { cwd: app.dir });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ ok: true, dryRun: false, unfixed: [], remaining: [] });
    expect(report.fixed).toHaveLength(4);
  }

  it('fw check finds each broken piece', async () => {
    const check = await runFw(['check', '--json'], { cwd: app.dir });
    expect(check.code).toBe(1);
    const codes = JSON.parse(check.stdout).diagnostics.filter((d: { severity: string }) => d.severity === 'error').map((d: { code: string; path: string }) => `${d.code} ${d.path}`);
    expect(codes).toEqual(expect.arrayContaining([
      'missing_bridge web/src/lib/fw.ts:1:1',
      'missing_provider web/src/main.tsx:1:1',
      'deep_generated_import web/src/App.tsx:2:31',
      'raw_runtime_fetch web/src/App.tsx:11:11',
    ]));
  });

  it('--dry-run prints the diff and changes nothing', async () => {
    const before = await snapshot(app.dir);
    const dry = await runFw(['do', 'connect-ui', '--dry-run', '--json'], { cwd: app.dir });
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    const report = JSON.parse(dry.stdout);
    expect(report).toMatchObject({ ok: true, dryRun: true, layout: 'vite', unfixed: [] });
    expect(report.files).toEqual([
      { path: 'web/src/App.tsx', change: 'modified' },
      { path: 'web/src/lib/fw.ts', change: 'created' },
      { path: 'web/src/main.tsx', change: 'modified' },
    ]);
    expect(report.diff).toContain("-    await fetch('/commands/createNote', {");
    expect(report.diff).toContain('+    await createNoteCommand.mutateAsync({ title });');
    expect(report.diff).toContain('+++ b/web/src/lib/fw.ts');
    expect(await snapshot(app.dir)).toEqual(before);

    // Without --json the diff goes to stdout, as a patch.
    const human = await runFw(['do', 'connect-ui', '--dry-run'], { cwd: app.dir });
    expect(human.code).toBe(0);
    expect(human.stdout).toBe(report.diff);
    expect(human.stderr).toContain('4 fixed, 0 left');
  });

  it('repairs every problem with edits that leave the rest of each file as it was', async () => {
    const run = await runFw(['do', 'connect-ui', '--json'], { cwd: app.dir });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ ok: true, dryRun: false, unfixed: [], remaining: [] });
    expect(report.fixed.map((f: { code: string; file: string; line: number; column: number }) => `${f.code} ${f.file}:${f.line}:${f.column}`)).toEqual([
      'deep_generated_import web/src/App.tsx:2:31',
      'raw_runtime_fetch web/src/App.tsx:11:11',
      'missing_bridge web/src/lib/fw.ts:1:1',
      'missing_provider web/src/main.tsx:1:1',
    ]);

    const appTsx = await readFile(path.join(app.dir, 'web/src/App.tsx'), 'utf8');
    expect(appTsx).toBe(
      brokenApp
        .replace("from '../../src/fw/_generated/api.ts';", "from './lib/fw.ts';")
        .replace('type Api }', 'type Api, useCommand }')
        .replace('export function App() {\n', "export function App() {\n  const createNoteCommand = useCommand('createNote');\n")
        .replace(/await fetch\('\/commands\/createNote', \{[\s\S]*?\}\);/, 'await createNoteCommand.mutateAsync({ title });'),
    );
    const main = await readFile(path.join(app.dir, 'web/src/main.tsx'), 'utf8');
    expect(main).toContain("import { FwProvider } from './lib/fw.ts';");
    expect(main).toContain("<StrictMode><FwProvider apiUrl={import.meta.env.VITE_FW_URL ?? ''} devAuth={devAuth}>\n    <App />\n  </FwProvider></StrictMode>");
    const bridge = await readFile(path.join(app.dir, 'web/src/lib/fw.ts'), 'utf8');
    expect(bridge).toContain("export type { Api } from '../../../src/fw/_generated/api.ts';");
  });

  it('leaves an app that passes fw check, links the form to createNote, typechecks and builds', async () => {
    await repair();
    const check = await runFw(['check', '--json'], { cwd: app.dir });
    expect(check.code, check.stdout).toBe(0);

    const capabilities = JSON.parse((await runFw(['inspect', 'capabilities', '--json'], { cwd: app.dir })).stdout);
    expect(capabilities.ui.paths).toContainEqual(expect.objectContaining({
      action: expect.objectContaining({ handler: 'addNote', event: 'onSubmit', element: 'form', method: 'mutateAsync' }),
      component: 'web/src/App.tsx#App',
      entry: 'createNote',
      writes: ['notes'],
      policy: 'user',
    }));

    const tsc = await runNode([path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', 'web/tsconfig.json', '--noEmit'], { cwd: app.dir });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.code).toBe(0);
    const build = await runNode([path.join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', 'web', '--logLevel', 'warn'], { cwd: app.dir });
    expect(build.code, build.stdout + build.stderr).toBe(0);
    expect(existsSync(path.join(app.dir, 'web/dist/index.html'))).toBe(true);
  }, 120_000);

  it('has nothing left to do on a second run', async () => {
    await repair();
    const again = await runFw(['do', 'connect-ui', '--json'], { cwd: app.dir });
    expect(again.code, again.stdout).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, fixed: [], unfixed: [], files: [], diff: '' });
  });
});

describe('fw do connect-ui on what is not mechanical', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  const source = `import { useEffect, useState } from 'react';
import { useLiveQuery } from './lib/fw.ts';

export function App() {
  const [notes, setNotes] = useState<unknown[]>([]);
  const live = useLiveQuery('liveNotes', {});
  useEffect(() => {
    fetch('/queries/listNotes', { method: 'POST', body: JSON.stringify({ args: {} }) }).then((r) => r.json()).then((b) => setNotes(b.result));
  }, []);

  async function add() {
    const response = await fetch('/commands/createNote', { method: 'POST', body: JSON.stringify({ args: { title: 'x' } }) });
    if (!response.ok) throw new Error('failed');
  }

  fetch('/commands/createNote', { method: 'POST', body: JSON.stringify({ args: { title: 'on render' } }) });
  return <button onClick={add}>{notes.length + (live.data?.length ?? 0)}</button>;
}
`;

  beforeAll(async () => {
    app = await createTestApp('minimal-web', { 'web/src/App.tsx': source });
  });
  afterAll(() => app?.remove());

  it('reports each raw fetch it leaves, with the reason, exits 1 and changes nothing', async () => {
    const run = await runFw(['do', 'connect-ui', '--json'], { cwd: app.dir });
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ ok: false, fixed: [], files: [], diff: '' });
    expect(report.unfixed.map((u: { code: string; line: number; reason: string }) => [u.code, u.line, u.reason.split(/[:;,]/)[0]])).toEqual([
      ['raw_runtime_fetch', 8, 'listNotes is read through a query'],
      ['raw_runtime_fetch', 12, 'Its response is read'],
      ['raw_runtime_fetch', 16, 'It is not inside an event handler of a component'],
    ]);
    expect(await readFile(path.join(app.dir, 'web/src/App.tsx'), 'utf8')).toBe(source);
  });
});

describe('fw do connect-ui on a component that already has the command hook', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  const source = `import { useCommand } from './lib/fw.ts';

export function App() {
  const save = useCommand('createNote');

  async function quickAdd() {
    await fetch('/commands/createNote', { method: 'POST', body: JSON.stringify({ args: { title: 'quick' } }) });
  }

  return <button onClick={quickAdd} disabled={save.isPending}>Add</button>;
}
`;

  beforeAll(async () => {
    app = await createTestApp('minimal-web', { 'web/src/App.tsx': source });
  });
  afterAll(() => app?.remove());

  it('reuses it instead of declaring a second useCommand for the same entry', async () => {
    const run = await runFw(['do', 'connect-ui', '--json'], { cwd: app.dir });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(await readFile(path.join(app.dir, 'web/src/App.tsx'), 'utf8')).toBe(
      source.replace("await fetch('/commands/createNote', { method: 'POST', body: JSON.stringify({ args: { title: 'quick' } }) });", "await save.mutateAsync({ title: 'quick' });"),
    );
  });
});
