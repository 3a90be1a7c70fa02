import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { SignJWT } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventStream } from './support/live-server.ts';
import { createTestApp, post, runFw, type RunningFw, startFw } from './support/app.ts';
import { hasChromium, launchChromium } from './support/browser.ts';
import { until } from './support/until.ts';

// fw's own servers as an attacker meets them: `fw start` publishes only what the build meant to, with
// security headers (under which the built templates still work in a browser), and cuts clients that
// send a request a byte at a time; the dev ports refuse Host names that are not their own (DNS
// rebinding) and cap connections.
const jwt = { FW_AUTH: 'jwt', FW_JWT_ISSUER: 'https://issuer.test/', FW_JWT_AUDIENCE: 'fw-server-hardening', FW_JWT_ALGORITHMS: 'HS256', FW_JWT_HS_SECRET: 'server-hardening-test-secret-of-32-bytes' };
const env = { ...jwt, FW_AI: 'mock', DATABASE_URL: '', FW_HEADERS_TIMEOUT_MS: '1000', FW_REQUEST_TIMEOUT_MS: '2000' };

// As a deployment builds: vitest's NODE_ENV=test would make Vite build a development bundle.
const buildEnv = { ...env, NODE_ENV: 'production' };
/** The password of the b2b-support-web template's demo users (B2B_DEMO_PASSWORD). */
const demoPassword = 'demo password for the e2e test';

/** A bearer token for a new user in a tenant of its own (each test owns its data). */
async function bearer(role = 'member'): Promise<string> {
  const token = await new SignJWT({ tenant_id: randomUUID(), role })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(`user-${randomUUID()}`)
    .setIssuer(jwt.FW_JWT_ISSUER)
    .setAudience(jwt.FW_JWT_AUDIENCE)
    .setExpirationTime('30m')
    .sign(new TextEncoder().encode(jwt.FW_JWT_HS_SECRET));
  return `Bearer ${token}`;
}

/**
 * Writes `bytes` on a fresh connection and never more; resolves with what the server answered once it
 * closes the connection. The deadline only turns a hang (no timeout at all) into a clear failure.
 */
function sendAndAwaitClose(port: number, bytes: string, deadlineMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    const deadline = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open for ${deadlineMs} ms`));
    }, deadlineMs);
    socket.on('data', (d) => (answer += d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(deadline);
      resolve(answer);
    });
    socket.write(bytes);
  });
}

/** Collects what a page would tell a developer is wrong: errors, failed requests, CSP violations. */
async function watchProblems(page: Page): Promise<() => Promise<string[]>> {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const w = window as unknown as { cspViolations?: string[] };
      (w.cspViolations ??= []).push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  return async () => [...problems, ...(await page.evaluate(() => (window as unknown as { cspViolations?: string[] }).cspViolations ?? []))];
}

/** A request with an explicit Host header (fetch does not let one set it), on a connection of its own. */
function requestWithHost(url: string, host: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: { ...init.headers, host }, agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

describe('fw start: static files, headers, slow clients', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let server: RunningFw | undefined;
  let url: string;

  beforeAll(async () => {
    app = await createTestApp('minimal-web', { 'web/public/.env': 'STRIPE_KEY=sk_live_planted\n', 'web/public/robots.txt': 'User-agent: *\n', 'web/public/.well-known/security.txt': 'Contact: mailto:security@example.test\n' }, { insideRepo: true });
    const built = await runFw(['build', '--json'], { cwd: app.dir, env: buildEnv });
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
      expect(response.headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin');
    }
    // The one dot folder meant to be public (RFC 8615).
    expect(await (await fetch(`${url}/.well-known/security.txt`)).text()).toBe('Contact: mailto:security@example.test\n');
    for (const route of ['/.env', '/%2eenv', '/assets/../.env', '/linked.txt', '/.well-known/../.env']) {
      const response = await fetch(`${url}${route}`, { headers: { accept: 'text/html' } });
      const body = await response.text();
      expect(response.status, route).toBe(404);
      expect(response.headers.get('x-content-type-options'), route).toBe('nosniff');
      expect(body).not.toContain('sk_live_planted');
      expect(body).not.toContain('outside-the-build');
    }
  });

  it('answers curl (Accept: */*) with the app for / and client routes, and a 404 for a missing asset', async () => {
    for (const route of ['/', '/notes/123']) {
      const page = await fetch(`${url}${route}`, { headers: { accept: '*/*' } });
      expect([route, page.status, page.headers.get('content-type')]).toEqual([route, 200, 'text/html; charset=utf-8']);
      expect(await page.text()).toContain('<div id="root">');
    }
    const missing = await fetch(`${url}/assets/missing.js`, { headers: { accept: '*/*' } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('closes a connection whose headers never finish (slow loris), and keeps serving others', async () => {
    const { port } = new URL(url);
    // The request line and part of the headers, then nothing: the server must give up on its own.
    const answer = await sendAndAwaitClose(Number(port), 'POST /queries/listNotes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect((await fetch(`${url}/health`)).status).toBe(200);
  }, 30_000);

  it('closes a connection whose body never finishes, while a live stream opened before it keeps streaming', async () => {
    const authorization = await bearer();
    const stream = await openEventStream(`${url}/live`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ subscriptions: [{ key: 'notes', name: 'liveNotes' }] }),
    });
    try {
      expect(stream.status).toBe(200);
      expect((await stream.next()).json.result).toEqual([]);
      // Complete headers announcing 100 bytes of body, of which 9 ever arrive.
      const { port } = new URL(url);
      const answer = await sendAndAwaitClose(
        Number(port),
        `POST /commands/createNote HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"args":{`,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
      // The stream has now been open longer than FW_REQUEST_TIMEOUT_MS, and still delivers.
      const created = await post(url, '/commands/createNote', { title: 'after the request timeout' }, { authorization });
      expect(created.status).toBe(200);
      const update = await stream.nextWhere((e) => Array.isArray(e.json.result) && e.json.result.length === 1);
      expect(update.json.result.map((n: { title: string }) => n.title)).toEqual(['after the request timeout']);
    } finally {
      stream.close();
    }
  }, 30_000);

  it('sends nosniff on API answers too, streamed ones included (the AI chat stream)', async () => {
    const health = await fetch(`${url}/health`);
    const refused = await fetch(`${url}/queries/listNotes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"args":{}}' });
    expect(refused.status).toBe(401);
    const chat = await fetch(`${url}/ai/agents/chat`, {
      method: 'POST',
      headers: { authorization: await bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'assistant', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hello' }] }] }),
    });
    expect(chat.status).toBe(200);
    expect(chat.headers.get('content-type')).toContain('text/event-stream');
    await chat.text();
    for (const response of [health, refused, chat]) expect(response.headers.get('x-content-type-options'), response.url).toBe('nosniff');
  });

  it.skipIf(!hasChromium)('the built app works in Chromium under the default CSP: it loads, adds a note and lists it live, with no violation', async () => {
    const browser = await launchChromium();
    try {
      const context = await browser.newContext({ extraHTTPHeaders: { authorization: await bearer() } });
      const page = await context.newPage();
      const problems = await watchProblems(page);
      const loaded = await page.goto(url);
      expect(loaded?.headers()['content-security-policy']).toContain("script-src 'self'");
      await page.getByText('No notes yet.').waitFor({ timeout: 30_000 });
      await page.getByLabel('Title').fill('Written under the CSP');
      await page.getByRole('button', { name: 'Add note' }).click();
      await page.getByRole('list', { name: 'Notes' }).getByText('Written under the CSP').waitFor({ timeout: 15_000 });
      expect(await problems()).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});

describe.skipIf(!hasChromium)('fw start: the b2b-support-web build under the default CSP in Chromium', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let server: RunningFw | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    app = await createTestApp('b2b-support-web', {}, { insideRepo: true });
    const built = await runFw(['build', '--json'], { cwd: app.dir, env: buildEnv });
    expect(built.code, built.stdout + built.stderr).toBe(0);
    // B2B_DEMO_PASSWORD: sign-in creates each workspace's demo users (admin@acme.test, agent@acme.test).
    server = await startFw(['start', '--port', '0', '--host', '127.0.0.1', '--migrate', '--json'], { cwd: app.dir, env: { ...env, B2B_DEMO_PASSWORD: demoPassword } });
    browser = await launchChromium();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await app?.remove();
  });

  /** The built app's sign-in page (src/endpoints/signIn.ts issues the token fw verifies), filled in and sent. */
  async function signIn(page: Page, password: string) {
    await page.getByLabel('Workspace').fill('acme');
    await page.getByLabel('Email').fill('agent@acme.test');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  it('signs in through its sign-in page, renders its styles, opens a ticket and lists it live, with no violation', async () => {
    const context = await browser!.newContext();
    const page = await context.newPage();
    const problems = await watchProblems(page);
    const loaded = await page.goto(server!.ready.serverUrl as string);
    expect(loaded?.headers()['content-security-policy']).toContain("style-src 'self'");
    await signIn(page, demoPassword);
    await page.getByText('No open tickets').waitFor({ timeout: 30_000 });
    expect(await page.getByLabel('Signed in').textContent()).toBe('Sam Agent · Acme · agentSign out');
    // The stylesheet applied (a CSS file of the build, allowed by style-src 'self').
    expect(await page.locator('.layout').evaluate((el) => getComputedStyle(el).display)).toBe('grid');
    await page.getByRole('button', { name: 'New ticket' }).click();
    await page.getByLabel('Subject').fill('Opened under the CSP');
    await page.getByRole('button', { name: 'Open ticket', exact: true }).click();
    await page.getByRole('list', { name: 'Active tickets' }).getByText('Opened under the CSP').waitFor({ timeout: 15_000 });
    expect(await problems()).toEqual([]);
    // The session is the tab's (sessionStorage): a reload stays signed in; signing out ends it.
    await page.reload();
    await page.getByRole('list', { name: 'Active tickets' }).getByText('Opened under the CSP').waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You signed out.').waitFor({ timeout: 15_000 });
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await context.close();
  }, 60_000);

  it('says why a wrong password is refused, with the error code, and signs in nobody', async () => {
    const context = await browser!.newContext();
    const page = await context.newPage();
    const problems = await watchProblems(page);
    await page.goto(server!.ready.serverUrl as string);
    await signIn(page, 'not the password');
    const banner = page.getByRole('alert');
    await expect.poll(() => banner.locator('.banner-text').textContent(), { timeout: 15_000 }).toMatch(/^Wrong workspace, email or password\.Code unauthenticatedReason invalid_credentialsTrace [0-9a-f]{32}$/);
    expect(await page.getByLabel('Password').inputValue()).toBe('');
    expect(await page.getByRole('button', { name: 'New ticket' }).count()).toBe(0);
    // The refused sign-in is the only failed request (Chromium logs it as a console error too).
    const signInUrl = new URL('/api/auth/sign-in', server!.ready.serverUrl as string).href;
    expect((await problems()).sort()).toEqual([`401 ${signInUrl}`, 'Failed to load resource: the server responded with a status of 401 (Unauthorized)']);
    await context.close();
  }, 60_000);
});

const devAuth = (tenant: string) => ({ 'x-fw-user-id': 'dev', 'x-fw-tenant-id': tenant, 'x-fw-role': 'member', 'content-type': 'application/json' });

describe('fw dev --api-only: Host allow-list and connection cap', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw | undefined;
  let url: string;

  beforeAll(async () => {
    app = await createTestApp('minimal-web');
    dev = await startFw(['dev', '--api-only', '--port', '0', '--allowed-hosts', '.intranet.test', '--json'], { cwd: app.dir, env: { FW_AI: 'mock', DATABASE_URL: '', FW_MAX_CONNECTIONS: '4' } });
    url = dev.ready.serverUrl as string;
  }, 120_000);

  afterAll(async () => {
    await dev?.stop();
    await app?.remove();
  });

  it('refuses a foreign Host (DNS rebinding) with 403 host_not_allowed and writes nothing, and answers its own names', async () => {
    const tenant = randomUUID();
    const rebound = await requestWithHost(`${url}/commands/createNote`, 'attacker.example:3100', { method: 'POST', headers: devAuth(tenant), body: JSON.stringify({ args: { title: 'rebound' } }) });
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body).error).toMatchObject({ code: 'forbidden', diagnostics: [{ path: 'headers.host', code: 'host_not_allowed', hint: expect.stringContaining('--allowed-hosts') }] });
    const listed = await requestWithHost(`${url}/queries/listNotes`, 'localhost:3100', { method: 'POST', headers: devAuth(tenant), body: '{"args":{}}' });
    expect(listed.status).toBe(200);
    expect(JSON.parse(listed.body).result).toEqual([]);
    for (const host of ['localhost:3100', 'app.localhost', '127.0.0.1:3100', '[::1]:3100', 'intranet.test', 'dev.intranet.test:3100']) {
      expect((await requestWithHost(`${url}/health`, host)).status, host).toBe(200);
    }
    for (const host of ['intranet.test.attacker.example', 'xintranet.test', 'localhost.attacker.example']) {
      expect((await requestWithHost(`${url}/health`, host)).status, host).toBe(403);
    }
  });

  it('refuses connections beyond FW_MAX_CONNECTIONS, and serves again once they close', async () => {
    const { port } = new URL(url);
    const held: Socket[] = [];
    let dropped = false;
    try {
      // Each socket makes a keep-alive request and stays open; the first one the server drops ends it.
      // (A connection of an earlier test may still be closing, so the cap may be reached sooner.)
      for (let i = 0; i < 10 && !dropped; i++) {
        const socket = connect(Number(port), '127.0.0.1');
        const outcome = await new Promise<'answered' | 'dropped'>((resolve) => {
          socket.once('data', () => resolve('answered'));
          socket.on('error', () => undefined);
          socket.once('close', () => resolve('dropped'));
          socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
        });
        if (outcome === 'answered') held.push(socket);
        else dropped = true;
      }
      expect(dropped).toBe(true);
      expect(held.length).toBeLessThanOrEqual(4);
    } finally {
      for (const socket of held) socket.destroy();
    }
    await until(async () => (await requestWithHost(`${url}/health`, 'localhost').catch(() => ({ status: 0 }))).status === 200, 'the server to accept connections again');
  });
});

describe('fw dev with a Vite web/: both ports refuse foreign Hosts, one setting admits a name on both', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw | undefined;

  beforeAll(async () => {
    // The app's own vite.config admits one name; FW_ALLOWED_HOSTS another.
    const viteConfig = `import react from '@vitejs/plugin-react';
import fw from 'fwjs/vite';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [react(), fw()],
  server: { allowedHosts: ['.vitecfg.test'] },
});
`;
    app = await createTestApp('minimal-web', { 'web/vite.config.ts': viteConfig }, { insideRepo: true });
    dev = await startFw(['dev', '--port', '0', '--web-port', '0', '--json'], { cwd: app.dir, env: { FW_AI: 'mock', DATABASE_URL: '', FW_ALLOWED_HOSTS: '.envhost.test' }, timeoutMs: 90_000 });
  }, 150_000);

  afterAll(async () => {
    await dev?.stop();
    await app?.remove();
  });

  it('the API port refuses a foreign Host and admits what vite.config and FW_ALLOWED_HOSTS admit', async () => {
    const api = dev!.ready.serverUrl as string;
    const rebound = await requestWithHost(`${api}/health`, 'attacker.example');
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body).error.diagnostics[0].code).toBe('host_not_allowed');
    for (const host of ['localhost', 'a.vitecfg.test', 'b.envhost.test']) expect((await requestWithHost(`${api}/health`, host)).status, host).toBe(200);
  });

  it('the web port refuses a foreign Host on fw routes and admits the same names', async () => {
    const web = dev!.ready.webUrl as string;
    const tenant = randomUUID();
    const rebound = await requestWithHost(`${web}/commands/createNote`, 'attacker.example', { method: 'POST', headers: devAuth(tenant), body: JSON.stringify({ args: { title: 'rebound' } }) });
    expect(rebound.status).toBe(403);
    const listed = await requestWithHost(`${web}/queries/listNotes`, 'localhost', { method: 'POST', headers: devAuth(tenant), body: '{"args":{}}' });
    expect(JSON.parse(listed.body).result).toEqual([]);
    for (const host of ['localhost', 'a.vitecfg.test', 'b.envhost.test']) expect((await requestWithHost(`${web}/health`, host)).status, host).toBe(200);
  });
});
