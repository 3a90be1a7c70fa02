import { request } from 'node:http';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, runFw, type RunningFw, startFw } from './support/app.ts';

// fw's own servers as an attacker meets them: `fw start` publishes only what the build meant to, with
// security headers, and cuts clients that send a request a byte at a time; the dev API port refuses
// Host names that are not its own (DNS rebinding).
const env = { FW_AUTH: 'none', FW_AI: 'mock', DATABASE_URL: '', FW_HEADERS_TIMEOUT_MS: '1000', FW_REQUEST_TIMEOUT_MS: '2000' };

/** GET with an explicit Host header (fetch does not let one set it). */
function getWithHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('fw start: static files, headers, slow clients', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let server: RunningFw | undefined;
  let url: string;

  beforeAll(async () => {
    app = await createTestApp('minimal-web', { 'web/public/.env': 'STRIPE_KEY=sk_live_planted\n', 'web/public/robots.txt': 'User-agent: *\n' }, { insideRepo: true });
    const built = await runFw(['build', '--json'], { cwd: app.dir, env });
    expect(built.code, built.stdout + built.stderr).toBe(0);
    // A link inside the build that points out of it (a stray symlink, or one planted by a build step).
    await mkdir(path.join(app.dir, 'outside'), { recursive: true });
    await writeFile(path.join(app.dir, 'outside', 'secret.txt'), 'outside-the-build');
    await symlink(path.join(app.dir, 'outside', 'secret.txt'), path.join(app.dir, '.fw/build/web/linked.txt'));
    server = await startFw(['start', '--port', '0', '--host', '127.0.0.1', '--migrate', '--json'], { cwd: app.dir, env });
    url = server.ready.serverUrl as string;
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    await app?.remove();
  });

  it('serves published files with security headers, and never a dotfile or a file outside the build', async () => {
    const robots = await fetch(`${url}/robots.txt`);
    expect(robots.status).toBe(200);
    expect(await robots.text()).toBe('User-agent: *\n');
    for (const response of [robots, await fetch(`${url}/`, { headers: { accept: 'text/html' } })]) {
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    }
    for (const route of ['/.env', '/%2eenv', '/assets/../.env', '/linked.txt']) {
      const response = await fetch(`${url}${route}`, { headers: { accept: 'text/html' } });
      const body = await response.text();
      expect(response.status, route).toBe(404);
      expect(body).not.toContain('sk_live_planted');
      expect(body).not.toContain('outside-the-build');
    }
  });

  it('closes a connection whose headers never finish (slow loris), and keeps serving others', async () => {
    const { port } = new URL(url);
    const socket = connect(Number(port), '127.0.0.1');
    const closed = new Promise<string>((resolve) => {
      let answer = '';
      socket.on('data', (d) => (answer += d));
      socket.on('close', () => resolve(answer));
    });
    socket.write('POST /queries/listNotes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n');
    // Nothing more is sent: the server must give up on its own. The test deadline only bounds a hang.
    const answer = await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect((await fetch(`${url}/health`)).status).toBe(200);
  }, 30_000);
});

describe('fw dev API port: Host allow-list', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw | undefined;
  let url: string;

  beforeAll(async () => {
    app = await createTestApp('minimal-web');
    dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir, env: { FW_AI: 'mock', DATABASE_URL: '', FW_ALLOWED_HOSTS: '.intranet.test' } });
    url = dev.ready.serverUrl as string;
  }, 120_000);

  afterAll(async () => {
    await dev?.stop();
    await app?.remove();
  });

  it('refuses a foreign Host (DNS rebinding) with 403 host_not_allowed, and answers its own names', async () => {
    const rebound = await getWithHost(`${url}/queries/listNotes`, 'attacker.example:3100');
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body).error).toMatchObject({ code: 'forbidden', diagnostics: [{ path: 'headers.host', code: 'host_not_allowed', hint: expect.stringContaining('FW_ALLOWED_HOSTS') }] });
    for (const host of ['localhost:3100', 'app.localhost', '127.0.0.1:3100', '[::1]:3100', 'dev.intranet.test']) {
      expect((await getWithHost(`${url}/health`, host)).status, host).toBe(200);
    }
  });
});
