import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post } from '../../e2e/support/app.ts';
import { until } from '../../e2e/support/until.ts';
import { createDevRuntime, type DevRuntime } from './dev-runtime.ts';

const auth = { 'x-fw-user-id': 'u1', 'x-fw-tenant-id': '00000000-0000-4000-8000-000000000001' };
const pingCommand = `import { command } from 'fwjs';
export default command({ handler: (ctx) => { ctx.emit('pinged', { from: ctx.auth.userId }); return 'pong'; } });
`;
const onPingAction = `import { action, z } from 'fwjs';
export default action({
  on: 'pinged',
  args: { from: z.string() },
  handler: async (ctx, args) => {
    await ctx.db.insertInto('notes').values({ title: 'pinged by ' + args.from + ' #' + ctx.event.attempt, author_id: 'worker' }).execute();
  },
});
`;

describe('the dev runtime’s outbox worker', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let runtime: DevRuntime;
  let server: Server;
  let url: string;

  beforeAll(async () => {
    app = await createTestApp('minimal-web', { 'src/commands/ping.ts': pingCommand });
    runtime = await createDevRuntime({ root: app.dir, generate: false, worker: { pollMs: 20 } });
    server = createServer(runtime.handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.close();
    await runtime?.close();
    await app?.remove();
  });

  const outbox = async () => (await (await fetch(`${url}/_fw/outbox`)).json()) as { counts: Record<string, number>; leased: number };
  /** The outbox once nothing in it is pending any more. */
  const settled = () =>
    until(async () => {
      const overview = await outbox();
      return overview.counts.pending === 0 && overview;
    }, 'the outbox to settle');

  it('delivers events, and a reload hands the worker the new app’s actions', async () => {
    expect(runtime.worker?.status().state).toBe('running');
    expect((await post(url, '/commands/ping', {}, auth)).status).toBe(200);
    // The event has no action yet: delivered with a note.
    expect(await settled()).toMatchObject({ counts: { pending: 0, delivered: 1, dead: 0 }, leased: 0 });

    const file = path.join(app.dir, 'src/actions/onPing.ts');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, onPingAction);
    expect((await runtime.reload([file])).ok).toBe(true);

    expect((await post(url, '/commands/ping', {}, auth)).status).toBe(200);
    expect(await settled()).toMatchObject({ counts: { pending: 0, delivered: 2, dead: 0 }, leased: 0 });
    const notes = await post(url, '/queries/listNotes', {}, auth);
    expect(notes.body.result.map((n: { title: string }) => n.title)).toEqual(['pinged by u1 #1']);
  });
});
