import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventStream } from './support/live-server.ts';
import { createTestApp, post, runFw, type RunningFw, startFw } from './support/app.ts';
import { createTestPostgresDatabase, testDatabaseUrl } from './support/postgres.ts';

// The two runtimes are shared by the file; each test acts as a tenant of its own, so the notes and
// invalidations it reads are the ones it made.
const devAuthOf = (tenant: string) => ({ 'x-fw-user-id': 'dev', 'x-fw-tenant-id': tenant, 'x-fw-role': 'member' });

describe.skipIf(!testDatabaseUrl)('live queries across two runtime processes on one PostgreSQL', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let pg: Awaited<ReturnType<typeof createTestPostgresDatabase>>;
  let one: RunningFw | undefined;
  let two: RunningFw | undefined;

  beforeAll(async () => {
    app = await createTestApp('minimal-web');
    pg = await createTestPostgresDatabase();
    const env = { DATABASE_URL: pg.url };
    one = await startFw(['dev', '--api-only', '--port', '0', '--json', '--no-watch'], { cwd: app.dir, env });
    two = await startFw(['dev', '--api-only', '--port', '0', '--json', '--no-watch'], { cwd: app.dir, env });
  });

  afterAll(async () => {
    await one?.stop();
    await two?.stop();
    await pg?.drop();
    await app?.remove();
  });

  it('a command handled by one process updates a subscriber connected to the other', async () => {
    const devAuth = devAuthOf(randomUUID());
    const urlOne = one!.ready.serverUrl as string;
    const urlTwo = two!.ready.serverUrl as string;
    expect(urlOne).not.toBe(urlTwo);
    const stream = await openEventStream(`${urlTwo}/live/liveNotes`, { headers: devAuth });
    try {
      const first = await stream.next();
      expect(first.event).toBe('snapshot');
      expect(first.json.result).toEqual([]);
      const created = await post(urlOne, '/commands/createNote', { title: 'from process one' }, devAuth);
      expect(created.status).toBe(200);
      const update = await stream.next();
      expect(update.event).toBe('snapshot');
      expect(update.json.result.map((n: { title: string }) => n.title)).toEqual(['from process one']);

      // The other direction, and a resume on the other process from a revision it never sent.
      const back = await openEventStream(`${urlOne}/live/liveNotes`, { headers: { ...devAuth, 'last-event-id': String(update.json.revision) } });
      try {
        expect((await back.next()).event).toBe('up-to-date');
        await post(urlTwo, '/commands/createNote', { title: 'from process two' }, devAuth);
        // Up-to-date left `back` with data of unknown age, so a run of older data may come first.
        const hasBoth = (e: { json: { result?: unknown[] } }) => e.json.result?.length === 2;
        expect((await back.nextWhere(hasBoth)).event).toBe('snapshot');
        expect((await stream.nextWhere(hasBoth)).event).toBe('snapshot');
      } finally {
        back.close();
      }
    } finally {
      stream.close();
    }
  });

  it('fw live status, invalidations list and debug read the running runtime', async () => {
    const tenant = randomUUID();
    const devAuth = devAuthOf(tenant);
    const url = one!.ready.serverUrl as string;
    const stream = await openEventStream(`${url}/live/liveNotes`, { headers: devAuth });
    try {
      const first = await stream.next();
      expect(first).toMatchObject({ event: 'snapshot', json: { result: [] } });
      // A write of this tenant's notes: the invalidation the list below reads.
      expect((await post(url, '/commands/createNote', { title: 'invalidates notes' }, devAuth)).status).toBe(200);
      const update = await stream.nextWhere((e) => e.json.result?.length === 1);
      expect(update.json.result.map((n: { title: string }) => n.title)).toEqual(['invalidates notes']);
      const status = await runFw(['live', 'status', '--url', url, '--json'], { cwd: app.dir });
      expect(status.code, status.stderr).toBe(0);
      const statusJson = JSON.parse(status.stdout);
      expect(statusJson).toMatchObject({ ok: true, reader: { wakeups: { mode: 'listen', listener: 'connected' } } });
      expect(statusJson.subscriptions).toBeGreaterThanOrEqual(1);

      const list = await runFw(['live', 'invalidations', 'list', '--url', url, '--table', 'notes', '--tenant', tenant, '--limit', '1', '--json'], { cwd: app.dir });
      expect(list.code, list.stderr).toBe(0);
      expect(JSON.parse(list.stdout).invalidations).toEqual([expect.objectContaining({ table: 'notes', tenantId: tenant })]);

      const debug = await runFw(['live', 'debug', first.json.subscriptionId, '--url', url, '--json'], { cwd: app.dir });
      expect(debug.code, debug.stderr).toBe(0);
      expect(JSON.parse(debug.stdout)).toMatchObject({ ok: true, liveQuery: 'liveNotes', group: { reads: ['notes'] } });

      const missing = await runFw(['live', 'debug', 'sub_nope', '--url', url, '--json'], { cwd: app.dir });
      expect(missing.code).toBe(1);
      expect(JSON.parse(missing.stdout)).toMatchObject({ ok: false, kind: 'not_found' });
    } finally {
      stream.close();
    }
  });
});

describe('fw live without a running runtime', () => {
  it('fails with runtime_unreachable and says how to start one', async () => {
    const app = await createTestApp('minimal-web');
    try {
      const result = await runFw(['live', 'status', '--url', 'http://127.0.0.1:9', '--json'], { cwd: app.dir });
      expect(result.code).toBe(1);
      const body = JSON.parse(result.stdout);
      expect(body).toMatchObject({ ok: false, kind: 'runtime_unreachable' });
      expect(body.suggestions.join(' ')).toMatch(/fw dev/);
    } finally {
      await app.remove();
    }
  });
});
