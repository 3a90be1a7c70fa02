import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, type RunningFw, startFw } from './support/app.ts';
import { until } from './support/until.ts';

// An external service whose manifest says how to start it (`service.dev`) runs beside `fw dev`: started
// with it, started again when it exits, stopped with it.
const slow = 180_000;

/** A free port for the service (it must be known to write its manifest's baseUrl). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const serviceSource = `import { createServer } from 'node:http';
const port = Number(process.argv[2]);
createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.url === '/commands/exit') { res.end('{"ok":true,"result":null}'); setTimeout(() => process.exit(3), 10); return; }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ ok: true, result: { pid: process.pid } }));
  });
}).listen(port, '127.0.0.1', () => console.log('pinger listening on ' + port));
`;

describe('fw dev runs external services with service.dev', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw | undefined;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    const manifest = {
      fwProtocol: '1.0',
      service: { name: 'pinger', transport: 'http', baseUrl: `http://127.0.0.1:${port}`, dev: { command: process.execPath, args: ['pinger.mjs', String(port)] } },
      entries: [{ name: 'ping', kind: 'query' }, { name: 'exit', kind: 'command', needsApproval: false }],
    };
    app = await createTestApp('minimal-web', { 'fw.manifest.json': JSON.stringify(manifest), 'pinger.mjs': serviceSource });
  });
  afterAll(async () => {
    await dev?.stop();
    await app?.remove();
  });

  const member = { 'x-fw-user-id': 'u1', 'x-fw-tenant-id': '00000000-0000-4000-8000-0000000000d1', 'x-fw-role': 'member' };
  const ping = async (): Promise<number | undefined> => {
    const answer = await post(String(dev!.ready.serverUrl), '/external/pinger/queries/ping', {}, member).catch(() => undefined);
    return answer?.status === 200 ? (answer.body as { result: { pid: number } }).result.pid : undefined;
  };

  it('starts it, prefixes its output, restarts it when it exits, and stops it with fw dev', { timeout: slow }, async () => {
    dev = await startFw(['dev', '--api-only', '--port', '0', '--no-watch', '--json'], { cwd: app.dir, timeoutMs: slow });
    expect(dev.ready.services).toEqual(['pinger']);
    const first = await until(ping, 'the service fw dev started', { timeoutMs: 60_000 });
    await until(async () => dev!.stderr().includes(`[pinger] pinger listening on ${port}`), 'its output, prefixed');

    expect((await post(String(dev.ready.serverUrl), '/external/pinger/commands/exit', {}, member)).status).toBe(200);
    const second = await until(async () => {
      const pid = await ping();
      return pid !== undefined && pid !== first && pid;
    }, 'the service started again', { timeoutMs: 60_000 });
    expect(second).not.toBe(first);
    expect(dev.stderr()).toContain('fw dev: service pinger exited with code 3; starting it again in');

    await dev.stop();
    dev = undefined;
    // Stopped with fw dev: its process is gone, its port closed.
    expect(() => process.kill(second, 0)).toThrow();
  });
});
