import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, post } from '../../e2e/support/app.ts';
import { AppLoadError } from '../app-load-error.ts';
import { createDevRuntime, type DevRuntime } from './dev-runtime.ts';

const auth = { 'x-fw-user-id': 'u1', 'x-fw-tenant-id': '00000000-0000-4000-8000-000000000001' };
const pingSource = (answer: string) => `import { query } from 'fwjs';\nexport default query({ policy: 'public', handler: () => ${JSON.stringify(answer)} });\n`;

describe('dev runtime reload', () => {
  // Each test edits files and data of its own app, served by its own dev runtime.
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let runtime: DevRuntime;
  let server: Server;
  let url: string;
  const pingFile = () => path.join(app.dir, 'src/queries/ping.ts');

  beforeEach(async () => {
    app = await createTestApp('minimal-web', { 'src/queries/ping.ts': pingSource('v1') });
    runtime = await createDevRuntime({ root: app.dir });
    server = createServer(runtime.handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await runtime?.close();
    await app?.remove();
  });

  it('serves an edited entry without a restart, keeping the data', async () => {
    expect((await post(url, '/commands/createNote', { title: 'survives reloads' }, auth)).status).toBe(200);
    expect((await post(url, '/queries/ping', {})).body.result).toBe('v1');
    await writeFile(pingFile(), pingSource('v2'));
    const outcome = await runtime.reload([pingFile()]);
    expect(outcome.ok).toBe(true);
    expect((await post(url, '/queries/ping', {})).body.result).toBe('v2');
    const notes = await post(url, '/queries/listNotes', {}, auth);
    expect(notes.body.result.map((n: { title: string }) => n.title)).toEqual(['survives reloads']);
  });

  it('picks up a new entry file and applies an additive schema change on reload', async () => {
    expect((await post(url, '/commands/createNote', { title: 'survives reloads' }, auth)).status).toBe(200);
    const file = path.join(app.dir, 'src/queries/countNotes.ts');
    await writeFile(file, "import { query, sql } from 'fwjs';\nexport default query({ handler: async (ctx) => (await ctx.db.selectFrom('notes').select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow()).n });\n");
    const schemaFile = path.join(app.dir, 'src/fw/schema.ts');
    const { readFile } = await import('node:fs/promises');
    await writeFile(schemaFile, (await readFile(schemaFile, 'utf8')).replace('body: t.text().nullable(),', "body: t.text().nullable(),\n      color: t.text().default('yellow'),"));
    const outcome = await runtime.reload([file, schemaFile]);
    expect(outcome.ok).toBe(true);
    expect((await post(url, '/queries/countNotes', {}, auth)).body.result).toBe('1');
    const notes = await post(url, '/queries/listNotes', {}, auth);
    expect(notes.body.result[0]).toMatchObject({ title: 'survives reloads', color: 'yellow' });
  });

  it('keeps serving the previous app when an edit breaks, and recovers when fixed', async () => {
    await writeFile(pingFile(), "import { query } from 'fwjs';\nexport default query({ handler: () => { return 1 +; } });\n");
    const broken = await runtime.reload([pingFile()]);
    expect(broken.ok).toBe(false);
    expect((broken as { error: unknown }).error).toBeInstanceOf(AppLoadError);
    expect((await post(url, '/queries/ping', {})).body.result).toBe('v1');
    await writeFile(pingFile(), pingSource('v3'));
    expect((await runtime.reload([pingFile()])).ok).toBe(true);
    expect((await post(url, '/queries/ping', {})).body.result).toBe('v3');
  });

  it('folds a burst of edits into at most one follow-up reload that sees the last version', async () => {
    await writeFile(pingFile(), pingSource('v8'));
    // Five change notifications at once (as a watcher delivers a save burst).
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => runtime.reload([pingFile()])));
    expect(outcomes.every((o) => o.ok)).toBe(true);
    // One reload runs at once; the four that arrive while it runs share a single follow-up.
    expect(new Set(outcomes).size).toBe(2);
    expect((await post(url, '/queries/ping', {})).body.result).toBe('v8');
  });
});
