import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, repoRoot, type RunningFw, runFw, startFw } from './support/app.ts';
import { until } from './support/until.ts';

// The Python example that ships in fw's package (examples/python-tickets), used as its README says:
// copied into an app, validated against it, started by fw dev, called through the bridge, typed.
const slow = 180_000;
const example = path.join(repoRoot, 'examples/python-tickets');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('examples/python-tickets in an app', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw | undefined;

  beforeAll(async () => {
    app = await createTestApp();
    await copyFile(path.join(example, 'service.py'), path.join(app.dir, 'service.py'));
    // Its own port, so nothing else on the machine is in its way; everything else as shipped.
    const port = String(await freePort());
    const manifest = JSON.parse(await readFile(path.join(example, 'fw.manifest.json'), 'utf8'));
    manifest.service.baseUrl = `http://127.0.0.1:${port}`;
    manifest.service.dev.args = ['service.py', '--port', port];
    await writeFile(path.join(app.dir, 'fw.manifest.json'), JSON.stringify(manifest, null, 2));
  });
  afterAll(async () => {
    await dev?.stop();
    await app?.remove();
  });

  it('validates against the app, types its results, starts with fw dev and answers through the bridge', { timeout: slow }, async () => {
    const validated = await runFw(['manifest', 'validate', 'fw.manifest.json', '--json'], { cwd: app.dir });
    expect(validated.code, validated.stdout + validated.stderr).toBe(0);
    expect(JSON.parse(validated.stdout)).toMatchObject({ ok: true, service: 'tickets', entries: 3, app: 'checked', diagnostics: [] });

    dev = await startFw(['dev', '--api-only', '--port', '0', '--no-watch', '--json'], { cwd: app.dir, timeoutMs: slow });
    expect(dev.ready.services).toEqual(['tickets']);
    const api = await readFile(path.join(app.dir, 'src/fw/_generated/api.ts'), 'utf8');
    expect(api).toContain("as ExternalRef<'query', Record<string, never>, { id: number; subject: string; status: 'open' | 'closed' }[]>");

    const ann = { 'x-fw-user-id': 'ann', 'x-fw-tenant-id': '00000000-0000-4000-8000-0000000000e1', 'x-fw-role': 'member' };
    const bob = { ...ann, 'x-fw-user-id': 'bob', 'x-fw-tenant-id': '00000000-0000-4000-8000-0000000000e2' };
    const url = String(dev.ready.serverUrl);
    // The service starts beside fw dev: the first answers may be "unreachable" until it listens.
    await until(async () => (await post(url, '/external/tickets/queries/listTickets', {}, ann)).status === 200, 'the Python service', { timeoutMs: 60_000 });
    const created = await post(url, '/external/tickets/commands/createTicket', { subject: 'Printer on fire' }, ann);
    expect(created).toMatchObject({ status: 200, body: { ok: true, result: { id: 1, subject: 'Printer on fire', status: 'open' } } });
    expect((await post(url, '/external/tickets/queries/listTickets', {}, ann)).body.result).toEqual([{ id: 1, subject: 'Printer on fire', status: 'open' }]);
    // Another tenant sees none of it; args the schema refuses never reach the service.
    expect((await post(url, '/external/tickets/queries/listTickets', {}, bob)).body.result).toEqual([]);
    const refused = await post(url, '/external/tickets/commands/createTicket', { subject: '' }, ann);
    expect([refused.status, refused.body.error.code, refused.body.error.diagnostics[0].path]).toEqual([400, 'validation_failed', 'args.subject']);
    await until(async () => dev!.stderr().includes('[tickets] POST /commands/createTicket 200'), "the service's own log line, prefixed");
  });
});
