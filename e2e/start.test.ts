import { request } from 'node:http';
import { connect } from 'node:net';
import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, runFw, type RunningFw, startFw } from './support/app.ts';
import { until } from './support/until.ts';

// Production auth: no dev headers; FW_AUTH=none leaves the public surface (health, public queries).
const env = { FW_AUTH: 'none', FW_AI: 'mock', DATABASE_URL: '' };

// Gated by files in the app directory (fw start's working directory), not by time: the test knows
// the request is running, and lets it finish when it has seen what it waits for.
const slowQuery = `import { existsSync, writeFileSync } from 'node:fs';
import { query } from 'fwjs';

export default query({
  description: 'Answers once the file "release" exists (graceful shutdown test).',
  policy: 'public',
  handler: async () => {
    writeFileSync('started', '');
    // The deadline only bounds a hang, should the test never release it.
    for (const deadline = Date.now() + 120_000; !existsSync('release'); ) {
      if (Date.now() > deadline) throw new Error('never released');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return { slept: true };
  },
});
`;

/** Whether a TCP connection to `url`'s port is accepted (closed again at once); false when refused. */
function connects(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    // Refused — or reset: a connect that reached the backlog as the listener closed is dropped unserved.
    socket.once('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNREFUSED' || error.code === 'ECONNRESET' ? resolve(false) : reject(error)));
  });
}

/** POST with keep-alive off, so the request is what holds the connection. */
function slowPost(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/queries/slow`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ args: {} }));
  });
}

describe('fw build and fw start', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let server: RunningFw | undefined;
  beforeAll(async () => {
    app = await createTestApp('minimal-web', { 'src/queries/slow.ts': slowQuery }, { insideRepo: true });
  });
  afterAll(async () => {
    await server?.stop();
    await app?.remove();
  });

  it('refuses to start without a build, builds, refuses pending migrations, serves, shuts down gracefully', async () => {
    const missing = await runFw(['start', '--port', '0', '--json'], { cwd: app.dir, env });
    expect(missing.code).not.toBe(0);
    expect(JSON.parse(missing.stdout)).toMatchObject({ ok: false, kind: 'build_missing', suggestions: ['fw build', expect.any(String)] });

    const built = await runFw(['build', '--json'], { cwd: app.dir, env });
    expect(built.code, built.stderr).toBe(0);
    const result = JSON.parse(built.stdout);
    expect(result).toMatchObject({ ok: true, server: path.join(app.dir, '.fw/build/server'), web: path.join(app.dir, '.fw/build/web'), durationMs: expect.any(Number) });

    // No FW_AUTH (empty counts as unset): refused with the one line that says what to set.
    const noAuth = await runFw(['start', '--port', '0'], { cwd: app.dir, env: { ...env, FW_AUTH: '' } });
    expect(noAuth.code).not.toBe(0);
    expect(noAuth.stderr.trim().split('\n')[0]).toBe('✖ auth_not_configured: FW_AUTH is not set, so fw start would answer 401 to every non-public entry; set FW_AUTH=jwt (with FW_JWT_ISSUER and FW_JWT_AUDIENCE), or FW_AUTH=none to serve anonymous callers on purpose.');

    const pending = await runFw(['start', '--port', '0', '--json'], { cwd: app.dir, env });
    expect(pending.code).not.toBe(0);
    expect(JSON.parse(pending.stdout)).toMatchObject({ ok: false, kind: 'migrations_pending' });

    // Without FW_AI=mock (and no provider key): what a production deployment that forgot its key gets.
    server = await startFw(['start', '--port', '0', '--host', '127.0.0.1', '--json', '--migrate'], { cwd: app.dir, env: { ...env, FW_AI: '', FW_CORS_ORIGINS: 'https://web.example.test, https://admin.example.test' } });
    const url = server.ready.serverUrl as string;
    expect(server.ready).toMatchObject({ ok: true, database: 'pglite', web: true, worker: true, ai: { models: 'mock', reason: 'no AI_GATEWAY_API_KEY', agents: ['assistant'] } });
    // Real users would get the scripted mock: said loudly, with what to set.
    await until(async () => server!.stderr().includes('fw start: WARNING — AI: no AI_GATEWAY_API_KEY is set'), 'the AI warning');
    expect(server.stderr()).toContain("the app's 1 agent (assistant) answer real users with fw's scripted mock model");

    expect((await fetch(`${url}/health`)).status).toBe(200);
    const index = await fetch(`${url}/`, { headers: { accept: 'text/html' } });
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await index.text();
    expect(html).toContain('<div id="root">');
    const asset = (await readdir(path.join(app.dir, '.fw/build/web/assets'))).find((f) => f.endsWith('.js'))!;
    const js = await fetch(`${url}/assets/${asset}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const deep = await fetch(`${url}/notes/123`, { headers: { accept: 'text/html' } });
    expect(deep.status).toBe(200);
    expect(await deep.text()).toBe(html);
    expect((await fetch(`${url}/missing.js`)).status).toBe(404);
    expect((await fetch(`${url}/queries/listNotes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"args":{}}' })).status).toBe(401);
    expect((await fetch(`${url}/_fw/live/status`)).status).toBe(403);
    // FW_CORS_ORIGINS: a page on a listed origin (Nuxt's server, docs/deploy.md) may call the API; another may not.
    const preflight = await fetch(`${url}/queries/listNotes`, { method: 'OPTIONS', headers: { origin: 'https://admin.example.test', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
    expect([preflight.status, preflight.headers.get('access-control-allow-origin')]).toEqual([204, 'https://admin.example.test']);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    const listed = await fetch(`${url}/health`, { headers: { origin: 'https://web.example.test' } });
    expect(listed.headers.get('access-control-allow-origin')).toBe('https://web.example.test');
    const other = await fetch(`${url}/health`, { headers: { origin: 'https://evil.example.test' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();

    // SIGTERM with a request in flight: new connections are refused while it runs, it still
    // completes, exit 0.
    let answered = false;
    const inFlight = slowPost(url).then(
      (response) => ((answered = true), response),
      (error: unknown) => ((answered = true), { status: 0, body: String(error) }),
    );
    const release = () => writeFile(path.join(app.dir, 'release'), '');
    try {
      await until(async () => existsSync(path.join(app.dir, 'started')), 'the slow query to start');
      const exited = server.stop();
      // A bare TCP connect: a request (even /health) could wait behind the slow query for PGlite's one
      // connection, if it got in before the listener closed.
      await until(() => connects(url).then((connected) => !connected), 'new connections to be refused');
      expect(answered).toBe(false);
      expect(server.child.exitCode).toBeNull();
      await release();
      const response = await inFlight;
      expect(response.status, response.body).toBe(200);
      expect(JSON.parse(response.body)).toMatchObject({ ok: true, result: { slept: true } });
      expect(await exited).toBe(0);
      expect(server.stderr()).toContain('fw start: stopped.');
    } finally {
      await release(); // never leave the query (and with it the process) waiting
    }
    server = undefined;
  }, 180_000);
});
