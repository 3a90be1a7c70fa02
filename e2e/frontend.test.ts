import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type RunningFw, runFw, startFw } from './support/app.ts';
import { until } from './support/until.ts';

describe('fw inspect and fw check', () => {
  // Each test its own copy of the template: one test's edits never reach another.
  let app: Awaited<ReturnType<typeof createTestApp>>;
  beforeEach(async () => {
    app = await createTestApp();
  });
  afterEach(() => app?.remove());

  it('inspect client lists each entry with its route, args schema and hooks', async () => {
    const run = await runFw(['inspect', 'client', '--json'], { cwd: app.dir });
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out).toMatchObject({ ok: true, layout: 'vite', bridge: 'web/src/lib/fw.ts' });
    expect(out.entries.find((e: { name: string }) => e.name === 'createNote')).toMatchObject({
      kind: 'command', route: 'POST /commands/createNote', policy: 'user',
      args: { properties: { title: { type: 'string' } } },
      hooks: { react: "useCommand('createNote')", vue: 'useFwCommand(api.commands.createNote)' },
    });
    // A liveQuery is reached by its subscription; its one-shot read is named beside it.
    expect(out.entries.find((e: { name: string }) => e.name === 'liveNotes')).toMatchObject({
      kind: 'liveQuery', route: 'GET /live/liveNotes', onceRoute: 'POST /queries/liveNotes',
      hooks: { react: "useLiveQuery('liveNotes', args)", vue: 'useFwLiveQuery(api.liveQueries.liveNotes, args)' },
    });
    expect(out.external).toEqual([]);
  });

  it('inspect client lists external entries with their route, schemas and hooks', async () => {
    const manifest = {
      fwProtocol: '1.0',
      service: { name: 'tickets', transport: 'http', baseUrl: 'http://127.0.0.1:8787' },
      entries: [
        { name: 'createTicket', kind: 'command', argsSchema: { type: 'object', properties: { subject: { type: 'string' } } }, resultSchema: { type: 'object', properties: { id: { type: 'string' } } } },
        { name: 'listTickets', kind: 'query' },
      ],
    };
    await writeFile(path.join(app.dir, 'fw.manifest.json'), JSON.stringify(manifest));
    const run = await runFw(['inspect', 'client', '--json'], { cwd: app.dir });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).external).toEqual([
      {
        name: 'tickets.createTicket', kind: 'command', route: 'POST /external/tickets/commands/createTicket', policy: 'user',
        args: manifest.entries[0]!.argsSchema, result: manifest.entries[0]!.resultSchema,
        hooks: { react: "useExternalCommand('tickets.createTicket')", vue: "useFwExternalCommand('tickets.createTicket')" },
      },
      {
        name: 'tickets.listTickets', kind: 'query', route: 'POST /external/tickets/queries/listTickets', policy: 'user', args: null, result: null,
        hooks: { react: "useExternalQuery('tickets.listTickets', args)", vue: "useFwExternalQuery('tickets.listTickets', args)" },
      },
    ]);
    const plain = await runFw(['inspect', 'client'], { cwd: app.dir });
    // Human output (on stderr, as every fw log line).
    expect(plain.stderr).toMatch(/query +tickets\.listTickets .*useExternalQuery\('tickets\.listTickets', args\)  policy user · external · result unknown \(no resultSchema\)/);
  });

  it('inspect frontend and capabilities describe the template with no errors or warnings', async () => {
    const frontend = await runFw(['inspect', 'frontend', '--json'], { cwd: app.dir });
    expect(frontend.code).toBe(0);
    const graph = JSON.parse(frontend.stdout);
    expect(graph.hooks.map((h: { hook: string; entry: string; status: string }) => [h.hook, h.entry, h.status])).toEqual([
      ['usePaginatedLiveQuery', 'findNotes', 'ok'],
      ['useCommand', 'createNote', 'ok'],
      ['useCommand', 'deleteNote', 'ok'],
      ['useCommand', 'updateNote', 'ok'],
    ]);
    expect(graph.diagnostics.filter((d: { severity: string }) => d.severity !== 'info')).toEqual([]);
    const capabilities = await runFw(['inspect', 'capabilities', '--json'], { cwd: app.dir });
    expect(capabilities.code).toBe(0);
    const caps = JSON.parse(capabilities.stdout);
    expect(caps.ui.paths.find((p: { entry: string }) => p.entry === 'createNote')).toMatchObject({
      action: { handler: 'addNote', event: 'onSubmit', element: 'form' }, routes: ['/'], writes: ['notes'], policy: 'user',
    });
  });

  it('check passes on the template and fails, naming file:line:col, on a raw fetch', async () => {
    const clean = await runFw(['check', '--json'], { cwd: app.dir });
    expect(clean.code, clean.stdout + clean.stderr).toBe(0);
    // Two notes, no problems: the template's listNotes and liveNotes have no UI (its page pages findNotes).
    expect(JSON.parse(clean.stdout)).toMatchObject({ ok: true, checks: expect.arrayContaining([{ name: 'frontend', ok: true, errors: 0, warnings: 0, infos: 2 }]) });

    await writeFile(path.join(app.dir, 'web/src/raw.ts'), "export const load = () => fetch('/queries/listNotes', { method: 'POST' });\n");
    const broken = await runFw(['check', '--json'], { cwd: app.dir });
    expect(broken.code).toBe(1);
    const report = JSON.parse(broken.stdout);
    expect(report.ok).toBe(false);
    expect(report.checks.find((c: { name: string }) => c.name === 'frontend')).toMatchObject({ ok: false, errors: 1 });
    expect(report.diagnostics.find((d: { code: string }) => d.code === 'raw_runtime_fetch')).toMatchObject({
      severity: 'error', file: 'web/src/raw.ts', line: 1, column: 27, suggestedCommand: 'fw do connect-ui',
    });
    // The artifacts now differ from the sources too.
    expect(report.checks.find((c: { name: string }) => c.name === 'generated')).toMatchObject({ ok: false });

    const human = await runFw(['check'], { cwd: app.dir });
    expect(human.code).toBe(1);
    expect(human.stderr).toContain('web/src/raw.ts:1:27 error raw_runtime_fetch');
  });

  it('dev --once --json reports the frontend diagnostics', async () => {
    await writeFile(path.join(app.dir, 'web/src/raw.ts'), "export const load = () => fetch('/queries/listNotes', { method: 'POST' });\n");
    const run = await runFw(['dev', '--once', '--json'], { cwd: app.dir });
    const report = JSON.parse(run.stdout);
    expect(report.diagnostics).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'raw_runtime_fetch', path: 'web/src/raw.ts:1:27' })]));
    expect(run.code).toBe(1);
  });
});

// The Vite plugin's watcher: web/ is held in memory and each edit re-reads and re-parses that file
// alone; the artifacts follow and the edited file's findings print in fw dev's terminal.
describe('fw dev keeps the frontend artifacts in step with web/ edits', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw;
  const graph = async () => JSON.parse(await readFile(path.join(app.dir, 'src/fw/_generated/frontendGraph.json'), 'utf8'));
  type Graph = { rawFetches: Array<{ file: string; url: string }> };
  /** Waits for fw dev to have rewritten frontendGraph.json (or printed) what `ok` looks for. */
  const follows = async (what: string, ok: (g: Graph) => boolean): Promise<Graph> => {
    try {
      return await until(async () => {
        const g: Graph = await graph().catch(() => ({ rawFetches: [] }));
        return ok(g) && g;
      }, what, { timeoutMs: 60_000 });
    } catch (error) {
      const has = await graph().then((g: Graph) => JSON.stringify(g.rawFetches), (e: unknown) => String(e));
      throw new Error(`${(error as Error).message}: frontendGraph.json has ${has}; fw dev said:\n${dev.stderr()}`);
    }
  };

  beforeAll(async () => {
    app = await createTestApp('minimal-web', {}, { insideRepo: true });
    dev = await startFw(['dev', '--port', '0', '--web-port', '0', '--json'], { cwd: app.dir, timeoutMs: 90_000 });
  }, 120_000);
  afterAll(async () => {
    await dev?.stop();
    await app?.remove();
  });

  it('follows an edited, an added and a removed file', async () => {
    expect((await graph()).rawFetches).toEqual([]);
    const appFile = path.join(app.dir, 'web/src/App.tsx');
    const original = await readFile(appFile, 'utf8');
    await writeFile(appFile, original.replace('  async function addNote(', "  async function ping() {\n    await fetch('/queries/listNotes', { method: 'POST' });\n  }\n\n  async function addNote("));
    const edited = await follows('the edited file\'s raw fetch', (g) => g.rawFetches.some((f) => f.file === 'web/src/App.tsx' && f.url === '/queries/listNotes'));
    expect(edited.rawFetches.map((f) => [f.file, f.url])).toEqual([['web/src/App.tsx', '/queries/listNotes']]);
    // The fetch is on the line after addNote's (the template's line, wherever it is).
    const fetchLine = original.split('\n').findIndex((line) => line.startsWith('  async function addNote(')) + 2;
    await follows('the diagnostic in the terminal', () => dev.stderr().includes(`web/src/App.tsx:${fetchLine}:11 error raw_runtime_fetch`));

    const added = path.join(app.dir, 'web/src/Extra.tsx');
    await writeFile(added, "export async function extra() {\n  await fetch('/commands/createNote', { method: 'POST' });\n}\n");
    const extra = await follows('the added file', (g) => g.rawFetches.some((f) => f.file === 'web/src/Extra.tsx'));
    expect(extra.rawFetches.map((f) => [f.file, f.url]).sort()).toEqual([['web/src/App.tsx', '/queries/listNotes'], ['web/src/Extra.tsx', '/commands/createNote']]);

    await rm(added);
    await writeFile(appFile, original);
    await follows('both gone again', (g) => g.rawFetches.length === 0);
    // Each wait bounds a hang on its own (and says what fw dev printed); the test's own limit is above their sum.
  }, 200_000);
});
