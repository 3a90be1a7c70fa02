import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandMeta, commandNames } from '../cli/command-meta.ts';
import { createTestApp, post, repoRoot, runFw, runNode, type RunningFw, startFw } from './support/app.ts';
import { createTestPostgresDatabase, testDatabaseUrl } from './support/postgres.ts';

const TENANT = '00000000-0000-4000-8000-000000000001';
const devAuth = { 'x-fw-user-id': 'user-1', 'x-fw-tenant-id': TENANT, 'x-fw-role': 'member' };

describe('fw CLI basics', () => {
  it('prints its version, as text and as JSON', async () => {
    const pkg = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8'));
    const text = await runFw(['--version'], { cwd: repoRoot });
    expect(text.code).toBe(0);
    expect(text.stdout.trim()).toBe(pkg.version);
    const json = await runFw(['--version', '--json'], { cwd: repoRoot });
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, name: 'fw', version: pkg.version });
  });

  it('has --help on every command, in plain text through a pipe (colour only with FORCE_COLOR)', async () => {
    for (const args of [['--help'], ['dev', '--help'], ['create', '--help'], ['db', '--help'], ['db', 'migrate', '--help'], ['db', 'status', '--help']]) {
      // As a user's shell runs it (citty, which renders usage, is plain under TEST or CI only).
      const r = await runFw(args, { cwd: repoRoot, env: { FORCE_COLOR: undefined, NO_COLOR: undefined, TEST: undefined, CI: undefined } });
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/^USAGE /m);
      expect(r.stdout).not.toContain('\x1b[');
    }
    // The root lists every command with what it does (from command-meta.ts, without loading them).
    const root = await runFw(['--help'], { cwd: repoRoot });
    const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    for (const name of commandNames) expect(root.stdout).toMatch(new RegExp(`^ +${name} +${escape(commandMeta(name).description.slice(0, 30))}`, 'm'));
    const coloured = await runFw(['--help'], { cwd: repoRoot, env: { FORCE_COLOR: '1', NO_COLOR: undefined, TEST: undefined, CI: undefined } });
    expect(coloured.stdout).toContain('\x1b[');
  });

  it('fw config shows every variable as this environment sets it, secrets masked, and fails on a malformed one', async () => {
    const secret = `hunter2-${randomUUID()}`;
    const shown = await runFw(['config', '--json'], { cwd: repoRoot, env: { FW_ADMIN_TOKEN: secret, FW_MAX_CONNECTIONS: '64', FW_TRACE_TENANT: undefined } });
    expect(shown.code).toBe(0);
    expect(shown.stdout).not.toContain(secret);
    const { ok, variables } = JSON.parse(shown.stdout);
    const row = (name: string) => variables.find((v: { name: string }) => v.name === name);
    expect(ok).toBe(true);
    expect(row('FW_ADMIN_TOKEN')).toMatchObject({ source: 'environment', type: 'secret', value: `•••• (set, ${secret.length} characters)` });
    expect(row('FW_MAX_CONNECTIONS')).toMatchObject({ source: 'environment', value: 64 });
    expect(row('FW_TRACE_TENANT')).toMatchObject({ source: 'default', value: false });
    const text = await runFw(['config'], { cwd: repoRoot, env: { FW_ADMIN_TOKEN: secret, FW_REQUEST_TIMEOUT_MS: 'soon' } });
    expect(text.code).toBe(1);
    expect(text.stdout).not.toContain(secret);
    expect(text.stdout).toMatch(/FW_REQUEST_TIMEOUT_MS\s+\(unset\)\s+✖ FW_REQUEST_TIMEOUT_MS must be a whole number ≥ 1, got "soon"\./);
  });

  it('fails an unknown command with a JSON failure', async () => {
    const r = await runFw(['frobnicate', '--json'], { cwd: repoRoot });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, kind: 'unknown_command', message: expect.stringContaining('frobnicate'), suggestions: ['fw --help'] });
  });

  it('names the nearest subcommand and the usage of the command that was mistyped', async () => {
    const r = await runFw(['inspect', 'clent', '--json'], { cwd: repoRoot });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({
      ok: false,
      kind: 'unknown_command',
      message: 'Unknown command "clent" for fw inspect. Commands: client, frontend, capabilities, agent-tools, crons.',
      suggestions: ['fw inspect client', 'fw inspect --help'],
    });
  });

  it('a missing argument is the caller’s mistake, with the usage to read', async () => {
    const r = await runFw(['workflows', 'show', '--json'], { cwd: repoRoot });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({
      ok: false,
      kind: 'invalid_arguments',
      message: 'fw workflows show: Missing required positional argument: RUNID',
      suggestions: ['fw workflows show --help'],
    });
  });
});

describe('the environment of fw under test', () => {
  it('is the scripted mock without a provider key, even when the test runner has one', async () => {
    const app = await createTestApp();
    const saved = process.env.AI_GATEWAY_API_KEY;
    process.env.AI_GATEWAY_API_KEY = 'a-key-no-test-may-use';
    try {
      const models = async (env?: NodeJS.ProcessEnv) => JSON.parse((await runFw(['ai', 'agents', '--json'], { cwd: app.dir, ...(env ? { env } : {}) })).stdout).models;
      expect(await models()).toBe('mock');
      // A test that means to use a provider passes its own environment.
      expect(await models({ FW_AI: '', AI_GATEWAY_API_KEY: 'its-own-key' })).toBe('gateway');
    } finally {
      if (saved === undefined) delete process.env.AI_GATEWAY_API_KEY;
      else process.env.AI_GATEWAY_API_KEY = saved;
      await app.remove();
    }
  });
});

describe('fw create', () => {
  let parent: string;
  beforeAll(async () => {
    parent = await mkdtemp(path.join(tmpdir(), 'fw-create-'));
  });
  afterAll(() => rm(parent, { recursive: true, force: true }));

  it('creates a minimal-web app that depends on this fw by default', async () => {
    const r = await runFw(['create', 'my-app', '--template', 'minimal-web', '--json'], { cwd: parent });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ ok: true, template: 'minimal-web', installed: false });
    expect(report.files).toEqual(expect.arrayContaining(['src/fw/schema.ts', 'src/commands/createNote.ts', 'src/queries/listNotes.ts', 'src/queries/liveNotes.ts', '.gitignore', '.node-version']));
    const pkg = JSON.parse(await readFile(path.join(parent, 'my-app', 'package.json'), 'utf8'));
    expect(pkg.name).toBe('my-app');
    // The app says which Node it needs, as fw does (runtime/core/node-version.ts).
    expect(pkg.engines).toEqual({ node: '>=22.12' });
    // …and brings it: npm scripts (fw dev, fw test) run on the `node` package's Node 24, as in fw's own repo.
    expect(pkg.devDependencies.node).toBe(JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')).devDependencies.node);
    expect((await readFile(path.join(parent, 'my-app', '.node-version'), 'utf8')).trim()).toBe('24');
    expect(pkg.dependencies.fwjs).toBe(`file:${repoRoot}`);
    // The linked checkout is built already; npm's install-script review has nothing to ask about, and
    // the `node` package's install script (it fetches that Node) is allowed.
    expect(pkg.allowScripts).toEqual({ node: true, [`file:${path.relative(path.join(parent, 'my-app'), repoRoot)}`]: false });
  });

  it('gives an app that typechecks (backend and web) and builds with no edits', async () => {
    // Inside the checkout, so React and Vite resolve from its node_modules without a network install.
    const repoApps = path.join(repoRoot, '.test-apps');
    await mkdir(repoApps, { recursive: true });
    const dir = await mkdtemp(path.join(repoApps, 'created-'));
    try {
      await rm(dir, { recursive: true });
      const created = await runFw(['create', dir, '--json'], { cwd: repoRoot });
      expect(created.code, created.stderr).toBe(0);
      await mkdir(path.join(dir, 'node_modules'), { recursive: true });
      await symlink(repoRoot, path.join(dir, 'node_modules', 'fwjs'), 'dir');
      const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
      for (const project of ['tsconfig.json', 'web/tsconfig.json']) {
        const result = await runNode([tsc, '-p', project, '--noEmit'], { cwd: dir });
        expect(result.stdout + result.stderr, project).toBe('');
        expect(result.code, project).toBe(0);
      }
      // `npm run build` is `fw build`: the backend bundle and the web app, what `npm start` (fw start) serves.
      const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
      expect(pkg.scripts).toMatchObject({ build: 'fw build', start: 'fw start' });
      const build = await runFw(['build', '--json'], { cwd: dir, env: { NODE_ENV: 'production' } });
      expect(build.code, build.stdout + build.stderr).toBe(0);
      expect(JSON.parse(build.stdout)).toMatchObject({ ok: true, server: path.join(dir, '.fw/build/server'), web: path.join(dir, '.fw/build/web') });
      expect(existsSync(path.join(dir, '.fw/build/web/index.html'))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("gives every template npm scripts that are fw's commands: build is fw build, start is fw start", async () => {
    const scripts: Record<string, Record<string, string>> = {};
    for (const template of ['minimal-web', 'b2b-support-web', 'nuxt-web']) {
      scripts[template] = JSON.parse(await readFile(path.join(repoRoot, 'templates', template, 'package.json'), 'utf8')).scripts;
    }
    expect(scripts['minimal-web']).toMatchObject({ dev: 'fw dev', test: 'fw test', build: 'fw build', start: 'fw start' });
    expect(scripts['b2b-support-web']).toMatchObject({ dev: 'fw dev', test: 'fw test', build: 'fw build', start: 'fw start' });
    // fw build skips a Nuxt web/ (with a note): Nuxt builds its own half.
    expect(scripts['nuxt-web']).toMatchObject({ dev: 'fw dev', test: 'fw test', build: 'fw build && nuxt build web', start: 'fw start' });
  });

  // A real npm install that fails on its own (the fw tarball does not exist) after resolving the rest.
  const failingInstall = (name: string) => ['create', name, '--install', '--fw-spec', 'file:/nonexistent/fw-0.0.0.tgz'];

  it('says what it does in plain lines while npm runs, piped, with --json or without: the step, npm\'s own lines, the outcome, then the failure', async () => {
    const json = await runFw([...failingInstall('install-piped-json'), '--json'], { cwd: parent });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, kind: 'install_failed' });
    expect(json.stderr).toContain('npm error');
    const plain = await runFw(failingInstall('install-piped'), { cwd: parent });
    expect(plain.code).toBe(1);
    expect(plain.stdout).toBe('');
    for (const output of [json.stderr, plain.stderr]) {
      // fw's own lines (npm's between them): the step when it starts, reminders while npm is quiet, the outcome.
      const said = output.split('\n').filter((line) => line.startsWith('… ') || line.startsWith('npm install failed'));
      expect(said[0]).toBe('… Installing dependencies (npm install)');
      expect(said.at(-1)).toMatch(/^npm install failed after \d+ s\.$/);
      expect(said.slice(1, -1).every((line) => /^… Installing dependencies \(npm install\) \d+ s$/.test(line))).toBe(true);
      expect(output).not.toContain('\u001b');
    }
    const fw = plain.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('npm ') && !line.startsWith('… '));
    const dir = path.join(parent, 'install-piped');
    expect(fw.slice(-3)).toEqual([
      `✖ npm install exited with ${/exited with (\d+) in/.exec(fw.at(-3)!)?.[1]} in ${dir}. fw create removed what it had written in ${dir}; nothing is left half-made.`,
      '  → Fix what npm said above (a network error: run again once online; a fwjs spec that does not install: --fw-spec with a tarball, a checkout or a published version), then run the same fw create again.',
      '  → fw create install-piped --template minimal-web --fw-spec file:/nonexistent/fw-0.0.0.tgz without --install, then cd install-piped && npm install, to keep the app and install it yourself.',
    ]);
    expect(existsSync(dir)).toBe(false);
  }, 180_000);

  it.skipIf(!existsSync('/usr/bin/script'))('on a terminal, shows one status line with the elapsed time while npm runs', async () => {
    // util-linux `script` gives fw a real terminal (its output is the terminal's transcript).
    const command = [process.execPath, path.join(repoRoot, 'dist/cli/bin.js'), ...failingInstall('install-tty')].map((a) => `'${a}'`).join(' ');
    const r = await runNode(['-e', `require('node:child_process').spawnSync('script', ['-qec', ${JSON.stringify(command)}, '/dev/null'], { stdio: 'inherit' })`], { cwd: parent, env: { FW_AI: 'mock' } });
    const transcript = r.stdout;
    expect(transcript).toContain('\r\u001b[2K… Installing dependencies (npm install) 0 s');
    expect(transcript).toMatch(/\r\u001b\[2Knpm install failed after \d+ s\./);
  }, 180_000);

  it.skipIf(!existsSync('/usr/bin/script'))('on a terminal with --json, draws no status line: one JSON document on stdout, plain lines and npm\'s own on stderr', async () => {
    const command = [process.execPath, path.join(repoRoot, 'dist/cli/bin.js'), ...failingInstall('install-tty-json'), '--json'].map((a) => `'${a}'`).join(' ');
    const r = await runNode(['-e', `require('node:child_process').spawnSync('script', ['-qec', ${JSON.stringify(command)}, '/dev/null'], { stdio: 'inherit' })`], { cwd: parent, env: { FW_AI: 'mock' } });
    const transcript = r.stdout;
    expect(transcript).toContain('npm error');
    // Plain lines on stderr (no redrawn status under a JSON run), stdout one document.
    expect(transcript).toContain('… Installing dependencies (npm install)');
    expect(transcript).not.toContain('\u001b[2K');
    const documents = transcript.split(/\r?\n/).filter((line) => line.startsWith('{'));
    expect(documents.map((line) => JSON.parse(line))).toEqual([expect.objectContaining({ ok: false, kind: 'install_failed' })]);
  }, 180_000);

  it('uses --fw-spec when given', async () => {
    const r = await runFw(['create', 'spec-app', '--fw-spec', '0.1.0-alpha.0', '--json'], { cwd: parent });
    expect(r.code).toBe(0);
    const pkg = JSON.parse(await readFile(path.join(parent, 'spec-app', 'package.json'), 'utf8'));
    expect(pkg.dependencies.fwjs).toBe('0.1.0-alpha.0');
    expect(pkg.dependencies.fw).toBeUndefined();
  });

  it('refuses a non-empty directory and an unknown template', async () => {
    await writeFile(path.join(parent, 'keep.txt'), 'mine');
    const busy = await runFw(['create', '.', '--json'], { cwd: parent });
    expect(busy.code).not.toBe(0);
    expect(JSON.parse(busy.stdout)).toMatchObject({ ok: false, kind: 'dir_not_empty' });
    const unknown = await runFw(['create', 'x', '--template', 'nope', '--json'], { cwd: parent });
    expect(JSON.parse(unknown.stdout)).toMatchObject({ ok: false, kind: 'unknown_template' });
    expect(existsSync(path.join(parent, 'x'))).toBe(false);
  });
});

describe('fw dev --api-only on the embedded database', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw;

  beforeAll(async () => {
    app = await createTestApp();
    dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir });
  });
  afterAll(async () => {
    await dev?.stop();
    await app?.remove();
  });

  it('prints one JSON line with serverUrl and serves the template entries', async () => {
    expect(dev.ready).toMatchObject({ ok: true, serverUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), database: 'pglite' });
    const serverUrl = dev.ready.serverUrl as string;
    // A tenant of its own: other tests write notes through the same server.
    const tenant = randomUUID();
    const mine = { ...devAuth, 'x-fw-tenant-id': tenant };
    const created = await post(serverUrl, '/commands/createNote', { title: 'Hello', body: 'from the test' }, mine);
    expect(created.status).toBe(200);
    expect(created.body.result).toMatchObject({ title: 'Hello', body: 'from the test', author_id: 'user-1', tenant_id: tenant });
    const second = await post(serverUrl, '/commands/createNote', { title: 'Newer' }, mine);
    expect(second.status).toBe(200);
    const listed = await post(serverUrl, '/queries/listNotes', {}, mine);
    expect(listed.body.result.map((n: { title: string }) => n.title)).toEqual(['Newer', 'Hello']);
    const live = await post(serverUrl, '/queries/liveNotes', {}, mine);
    expect(live.body.result).toHaveLength(2);
    const entries = (await (await fetch(`${serverUrl}/entries`)).json()) as { entries: Array<{ name: string }> };
    expect(entries.entries.map((e) => e.name).sort()).toEqual(['createNote', 'deleteNote', 'findNotes', 'listNotes', 'liveNotes', 'updateNote']);
    expect(existsSync(path.join(app.dir, '.fw', 'db'))).toBe(true);
  });

  it('validates template args (title 1–200 characters)', async () => {
    const serverUrl = dev.ready.serverUrl as string;
    const tooLong = await post(serverUrl, '/commands/createNote', { title: 'x'.repeat(201) }, devAuth);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.diagnostics[0]).toMatchObject({ path: 'args.title', code: 'too_big' });
    const empty = await post(serverUrl, '/commands/createNote', { title: '   ' }, devAuth);
    expect(empty.status).toBe(400);
  });

  it('runs the template’s assistant agent: a tool answer, an approval round trip, and its trace', async () => {
    const serverUrl = dev.ready.serverUrl as string;
    const run = async (body: unknown) => {
      const response = await fetch(`${serverUrl}/ai/agents/run`, { method: 'POST', headers: { 'content-type': 'application/json', ...devAuth }, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as any };
    };
    const paused = await run({ agent: 'assistant', prompt: 'call createNote {"title":"From the agent"}' });
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body.result.pendingApprovals.map((p: { toolName: string }) => p.toolName)).toEqual(['createNote']);
    const approved = await run({ agent: 'assistant', messages: paused.body.result.messages, approvals: [{ approvalId: paused.body.result.pendingApprovals[0].approvalId, approved: true }] });
    expect(approved.body.result.status).toBe('completed');
    const listed = await run({ prompt: 'call listNotes' });
    expect(listed.body.result.text).toContain('From the agent');

    const trace = await runFw(['ai', 'trace', approved.body.traceId, '--json'], { cwd: app.dir });
    expect(trace.code, trace.stdout + trace.stderr).toBe(0);
    const runs = JSON.parse(trace.stdout).runs;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ kind: 'agent-run', agent: 'assistant', provider: 'mock', status: 'completed', approvals: [{ tool: 'createNote', approved: true }], content: null });
    expect(trace.stdout).not.toContain('From the agent');
  });

  it('refuses a second process on the same embedded database instead of corrupting it', async () => {
    // fw dev --once opens the database itself: refused, naming the holder — the fw dev process — and what to run instead.
    const once = await runFw(['dev', '--once', '--json'], { cwd: app.dir });
    expect(once.code).toBe(1);
    const report = JSON.parse(once.stdout);
    expect(report.steps[0]).toMatchObject({ ok: false, code: 'database_locked', error: expect.stringContaining(`pid ${dev.child.pid} (bin.js dev`) });
    const holder = /\((bin\.js dev[^)]*)\)/.exec(report.steps[0].error)![1];
    expect(report.steps[0].suggestions[0]).toBe(`Stop pid ${dev.child.pid} (${holder}), then run this again; or ask the running fw dev instead: fw db status, fw db migrate, fw live status and fw workflows list find it and go through it over HTTP.`);
    expect(report.diagnostics[0]).toMatchObject({ code: 'database_locked', hint: report.steps[0].suggestions.join(' ') });
    // fw db migrate does not open it beside fw dev: it asks fw dev, which holds it (docs/migrations.md).
    const migrate = await runFw(['db', 'migrate', '--json'], { cwd: app.dir });
    expect(migrate.code, migrate.stdout + migrate.stderr).toBe(0);
    expect(JSON.parse(migrate.stdout)).toEqual({ ok: true, applied: [], migrationId: null, via: dev.ready.serverUrl });
  });

  it('fw db status beside fw dev asks the running dev server, which holds the embedded database', async () => {
    const status = await runFw(['db', 'status', '--json'], { cwd: app.dir });
    expect(status.code, status.stdout + status.stderr).toBe(0);
    const report = JSON.parse(status.stdout);
    // fw dev migrated the template's schema on start: one migration, nothing pending.
    expect(report).toMatchObject({ ok: true, via: dev.ready.serverUrl, pending: [], blocked: [] });
    expect(report.applied).toHaveLength(1);
    expect(report.applied[0].changes).toContainEqual({ kind: 'create_table', description: expect.stringMatching(/^create table notes \(/) });
    const text = await runFw(['db', 'status'], { cwd: app.dir });
    expect(text.stderr).toContain(`(from the running fw dev at ${dev.ready.serverUrl as string}, which holds the embedded database)`);
  });

  it('reports port_busy from a second process on the same port', async () => {
    const port = new URL(dev.ready.serverUrl as string).port;
    const second = await runFw(['dev', '--api-only', '--port', port, '--json'], { cwd: app.dir });
    expect(second.code).not.toBe(0);
    const failure = JSON.parse(second.stdout.trim());
    expect(failure).toMatchObject({ ok: false, kind: 'port_busy', message: expect.stringContaining(port) });
    // The command as given, with another port: no flag the user did not pass.
    expect(failure.suggestions).toEqual(['fw dev --api-only --port 0  (pick a free port)', `fw dev --api-only --port ${Number(port) + 1}`, `lsof -i :${port}  (find what holds it)`]);
    expect(second.stdout.trim().split('\n')).toHaveLength(1);
  });
});

describe('fw dev with a web app', () => {
  it('moves to the next free web port when the default one is busy', async () => {
    const blocker = createServer((_req, res) => res.end('taken'));
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const busyPort = (blocker.address() as AddressInfo).port;
    const app = await createTestApp('minimal-web', {}, { insideRepo: true });
    try {
      const dev = await startFw(['dev', '--port', '0', '--web-port', String(busyPort), '--json'], { cwd: app.dir });
      try {
        const webUrl = new URL(dev.ready.webUrl as string);
        expect(Number(webUrl.port)).not.toBe(busyPort);
        expect(Number(webUrl.port)).toBeGreaterThan(busyPort);
        expect((await fetch(`${dev.ready.webUrl}/health`)).status).toBe(200);
      } finally {
        await dev.stop();
      }
    } finally {
      blocker.close();
      await app.remove();
    }
  });

  it('--web-only serves the web app and its API routes from the web dev server alone', async () => {
    const app = await createTestApp('minimal-web', {}, { insideRepo: true });
    try {
      const dev = await startFw(['dev', '--web-only', '--web-port', '0', '--json'], { cwd: app.dir });
      try {
        expect(dev.ready.serverUrl).toBeUndefined();
        const webUrl = dev.ready.webUrl as string;
        expect((await post(webUrl, '/commands/createNote', { title: 'via vite' }, devAuth)).status).toBe(200);
        const listed = await post(webUrl, '/queries/listNotes', {}, devAuth);
        expect(listed.body.result.map((n: { title: string }) => n.title)).toEqual(['via vite']);
        expect(await (await fetch(webUrl)).text()).toContain('<div id="root">');
      } finally {
        await dev.stop();
      }
    } finally {
      await app.remove();
    }
  });
});

describe('fw dev --once', () => {
  it('runs one pass and reports its steps', async () => {
    const app = await createTestApp();
    try {
      const r = await runFw(['dev', '--once', '--json'], { cwd: app.dir });
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout);
      // The template's listNotes and liveNotes have no UI (its page pages findNotes): notes, not problems.
      expect(report).toMatchObject({
        ok: true,
        diagnostics: [
          { code: 'entry_without_ui', severity: 'info', path: 'src/queries/listNotes.ts:1:1' },
          { code: 'entry_without_ui', severity: 'info', path: 'src/queries/liveNotes.ts:1:1' },
        ],
        health: { status: 'ok' },
      });
      expect(report.steps.map((s: { name: string; ok: boolean }) => [s.name, s.ok])).toEqual([
        ['start (load, migrate, generate, listen)', true],
        ['probe GET /health', true],
        ['stop', true],
      ]);
    } finally {
      await app.remove();
    }
  });

  it('fails with the broken file named when the app does not load', async () => {
    const app = await createTestApp('minimal-web', { 'src/commands/broken.ts': 'export default 42;\n' });
    try {
      const r = await runFw(['dev', '--once', '--json'], { cwd: app.dir });
      expect(r.code).not.toBe(0);
      const report = JSON.parse(r.stdout);
      expect(report.ok).toBe(false);
      expect(report.diagnostics[0]).toMatchObject({ path: 'src/commands/broken.ts', severity: 'error' });
    } finally {
      await app.remove();
    }
  });
});

describe('fw db on an app', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  const schemaFile = () => path.join(app.dir, 'src/fw/schema.ts');

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(() => app?.remove());

  it('migrates, adds a column keeping data, and refuses a drop until told', async () => {
    const first = await runFw(['db', 'migrate', '--json'], { cwd: app.dir });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ ok: true, migrationId: expect.any(Number) });

    // Some data to keep: run the API, write a note, stop.
    const dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir });
    expect((await post(dev.ready.serverUrl as string, '/commands/createNote', { title: 'keep me' }, devAuth)).status).toBe(200);
    await dev.stop();

    const original = await readFile(schemaFile(), 'utf8');
    await writeFile(schemaFile(), original.replace("body: t.text().nullable(),", "body: t.text().nullable(),\n      pinned: t.boolean().default(false),"));
    const status = await runFw(['db', 'status', '--json'], { cwd: app.dir });
    expect(status.code, status.stderr).toBe(0);
    const pending = JSON.parse(status.stdout);
    expect(pending.pending.map((c: { kind: string }) => c.kind)).toEqual(['add_column']);
    const added = await runFw(['db', 'migrate', '--json'], { cwd: app.dir });
    expect(added.code, added.stderr).toBe(0);

    const dev2 = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir });
    const listed = await post(dev2.ready.serverUrl as string, '/queries/listNotes', {}, devAuth);
    expect(listed.body.result).toEqual([expect.objectContaining({ title: 'keep me', pinned: false })]);
    await dev2.stop();

    await writeFile(schemaFile(), original.replace('body: t.text().nullable(),', ''));
    const refused = await runFw(['db', 'migrate', '--json'], { cwd: app.dir });
    expect(refused.code).not.toBe(0);
    const failure = JSON.parse(refused.stdout);
    expect(failure).toMatchObject({ ok: false, kind: 'migration_blocked' });
    expect(failure.diagnostics.map((d: { path: string }) => d.path).join(' ')).toMatch(/notes\.body/);
    // fw dev refuses to start on a blocked schema rather than serving a half-migrated one.
    const blockedDev = await runFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir });
    expect(blockedDev.code).not.toBe(0);
    expect(JSON.parse(blockedDev.stdout)).toMatchObject({ ok: false, kind: 'migration_blocked' });

    const applied = await runFw(['db', 'migrate', '--accept-data-loss', '--json'], { cwd: app.dir });
    expect(applied.code, applied.stderr).toBe(0);
    const history = JSON.parse((await runFw(['db', 'status', '--json'], { cwd: app.dir })).stdout);
    expect(history.applied.length).toBe(3);
    expect(history.pending).toEqual([]);
  }, 240_000); // ten real fw processes, each opening the embedded database
});

describe.skipIf(!testDatabaseUrl)('fw dev --api-only on PostgreSQL (DATABASE_URL)', () => {
  it('serves the template against PostgreSQL', async () => {
    const pg = await createTestPostgresDatabase();
    const app = await createTestApp();
    try {
      const dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir, env: { DATABASE_URL: pg.url } });
      try {
        expect(dev.ready).toMatchObject({ database: 'postgres' });
        const serverUrl = dev.ready.serverUrl as string;
        expect((await post(serverUrl, '/commands/createNote', { title: 'on pg' }, devAuth)).status).toBe(200);
        const other = await post(serverUrl, '/queries/listNotes', {}, { ...devAuth, 'x-fw-tenant-id': '00000000-0000-4000-8000-000000000002' });
        expect(other.body.result).toEqual([]);
        const mine = await post(serverUrl, '/queries/listNotes', {}, devAuth);
        expect(mine.body.result.map((n: { title: string }) => n.title)).toEqual(['on pg']);
        expect(existsSync(path.join(app.dir, '.fw', 'db'))).toBe(false);
      } finally {
        await dev.stop();
      }
    } finally {
      await app.remove();
      await pg.drop();
    }
  });
});
