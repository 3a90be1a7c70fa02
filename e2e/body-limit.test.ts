import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, runFw, type RunningFw, startFw } from './support/app.ts';

// A request body over the limit is answered `413 payload_too_large` with a hint naming the limit and
// FW_BODY_LIMIT_BYTES, on fw dev's API port, on its Vite port and on fw start, while the client is still
// sending: the rest of the body is read and discarded, so the client reads the answer (no connection
// reset) and the connection stays usable.

const twoMiB = 2 * 1024 * 1024;
const devHeaders = (tenant: string) => ({ 'x-fw-user-id': 'dev', 'x-fw-tenant-id': tenant, 'content-type': 'application/json' });

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One raw HTTP/1.1 connection, so a test decides when each byte is sent and sees exactly what the
 * server does with the connection. `next()` resolves with the next complete answer (fixed length), and
 * rejects once the server closes or resets the connection before sending one.
 */
function rawConnection(port: number): Promise<{ socket: Socket; next(): Promise<Answer>; write(data: string | Buffer): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buffer = Buffer.alloc(0);
    let ended: Error | undefined;
    let waiting: { resolve(a: Answer): void; reject(e: Error): void } | undefined;
    const tryParse = () => {
      if (!waiting) return;
      const headEnd = buffer.indexOf('\r\n\r\n');
      if (headEnd >= 0) {
        const [statusLine, ...lines] = buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
        const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        const length = Number(headers['content-length'] ?? 0);
        if (buffer.length >= headEnd + 4 + length) {
          const body = buffer.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
          buffer = buffer.subarray(headEnd + 4 + length);
          const w = waiting;
          waiting = undefined;
          return w.resolve({ status: Number(statusLine!.split(' ')[1]), headers, body });
        }
      }
      if (ended) {
        const w = waiting;
        waiting = undefined;
        w.reject(ended);
      }
    };
    socket.on('data', (d: Buffer) => {
      buffer = Buffer.concat([buffer, d]);
      tryParse();
    });
    socket.on('error', (error) => {
      ended = error;
      tryParse();
    });
    socket.on('close', () => {
      ended ??= new Error('the server closed the connection');
      tryParse();
    });
    socket.once('connect', () =>
      resolve({
        socket,
        next: () =>
          new Promise<Answer>((res, rej) => {
            waiting = { resolve: res, reject: rej };
            tryParse();
          }),
        write: (data) =>
          new Promise<void>((res, rej) => {
            if (ended) return rej(ended);
            socket.write(data, (error) => (error ? rej(error) : res()));
          }),
      }),
    );
    socket.once('error', reject);
  });
}

function head(method: string, route: string, headers: Record<string, string>): string {
  return `${method} ${route} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
}

/** What every 413 says: fw's envelope, the code, and a hint naming the limit and the variable that raises it. */
function expectTooLarge(answer: Answer, limitText: string): void {
  expect(answer.status).toBe(413);
  const body = JSON.parse(answer.body);
  expect(body.ok).toBe(false);
  expect(body.error.code).toBe('payload_too_large');
  expect(body.error.diagnostics[0]).toMatchObject({ path: 'body', code: 'too_large', hint: `Send at most ${limitText} in one request. Set FW_BODY_LIMIT_BYTES to accept larger bodies (docs/deploy.md#server-limits).` });
  expect(typeof body.traceId).toBe('string');
}

/** The checks every server gets: declared and streamed bodies over the limit, by a raw client and by fetch. */
function itRefusesLargeBodies(server: () => { url: string; headers: Record<string, string>; limitText: string }): void {
  it('answers a 2 MiB body with a declared length 413 before reading it, discards the rest, and serves the next request on the same connection', async () => {
    const { url, headers, limitText } = server();
    const connection = await rawConnection(Number(new URL(url).port));
    try {
      // Headers only: the answer comes on the declared length alone.
      await connection.write(head('POST', '/commands/createNote', { ...headers, 'content-length': String(twoMiB) }));
      expectTooLarge(await connection.next(), limitText);
      // The client was already sending: the whole body is taken (no reset), and the connection still serves.
      await connection.write(Buffer.alloc(twoMiB, 0x61));
      await connection.write(head('GET', '/health', {}));
      expect((await connection.next()).status).toBe(200);
    } finally {
      connection.socket.destroy();
    }
  });

  it('answers a streamed (chunked) 2 MiB body 413 once it passes the limit, and keeps the connection', async () => {
    const { url, headers, limitText } = server();
    const connection = await rawConnection(Number(new URL(url).port));
    try {
      await connection.write(head('POST', '/commands/createNote', { ...headers, 'transfer-encoding': 'chunked' }));
      const answer = connection.next();
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      for (let sent = 0; sent < twoMiB; sent += chunk.length) await connection.write(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]));
      await connection.write('0\r\n\r\n');
      expectTooLarge(await answer, limitText);
      await connection.write(head('GET', '/health', {}));
      expect((await connection.next()).status).toBe(200);
    } finally {
      connection.socket.destroy();
    }
  });

  it('gives fetch the 413 for a 2 MiB JSON body, every time', async () => {
    const { url, headers, limitText } = server();
    const body = JSON.stringify({ args: { title: 'x'.repeat(twoMiB) } });
    for (let i = 0; i < 5; i++) {
      const response = await fetch(`${url}/commands/createNote`, { method: 'POST', headers, body });
      expectTooLarge({ status: response.status, headers: {}, body: await response.text() }, limitText);
    }
  });
}

describe('fw dev: a body over the limit is a 413, not a connection reset', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw | undefined;
  const tenant = randomUUID();

  beforeAll(async () => {
    app = await createTestApp('minimal-web', {}, { insideRepo: true });
    dev = await startFw(['dev', '--port', '0', '--web-port', '0', '--json'], { cwd: app.dir, env: { DATABASE_URL: '' }, timeoutMs: 90_000 });
  }, 150_000);

  afterAll(async () => {
    await dev?.stop();
    await app?.remove();
  });

  describe('the API port', () => {
    itRefusesLargeBodies(() => ({ url: dev!.ready.serverUrl as string, headers: devHeaders(tenant), limitText: '1 MiB' }));
  });

  describe('the Vite port', () => {
    itRefusesLargeBodies(() => ({ url: dev!.ready.webUrl as string, headers: devHeaders(tenant), limitText: '1 MiB' }));
  });

  it('still takes a body under the limit', async () => {
    const response = await fetch(`${dev!.ready.serverUrl}/commands/createNote`, { method: 'POST', headers: devHeaders(tenant), body: JSON.stringify({ args: { title: 'small' } }) });
    expect(response.status).toBe(200);
  });
});

describe('fw start: a body over FW_BODY_LIMIT_BYTES is a 413, not a connection reset', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let server: RunningFw | undefined;
  // A limit of its own: the variable is what the server enforces and names.
  const jwt = { FW_AUTH: 'jwt', FW_JWT_ISSUER: 'https://issuer.test/', FW_JWT_AUDIENCE: 'fw-body-limit', FW_JWT_ALGORITHMS: 'HS256', FW_JWT_HS_SECRET: 'body-limit-test-secret-of-32-bytes!!' };
  const env = { ...jwt, DATABASE_URL: '', FW_BODY_LIMIT_BYTES: '1500000', NODE_ENV: 'production' };
  let authorization: string;

  beforeAll(async () => {
    app = await createTestApp('minimal-web');
    // The API alone: nothing here needs the built web app.
    await rm(path.join(app.dir, 'web'), { recursive: true });
    const built = await runFw(['build', '--json'], { cwd: app.dir, env });
    expect(built.code, built.stdout + built.stderr).toBe(0);
    const token = await new SignJWT({ tenant_id: randomUUID(), role: 'member' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(`user-${randomUUID()}`)
      .setIssuer(jwt.FW_JWT_ISSUER)
      .setAudience(jwt.FW_JWT_AUDIENCE)
      .setExpirationTime('30m')
      .sign(new TextEncoder().encode(jwt.FW_JWT_HS_SECRET));
    authorization = `Bearer ${token}`;
    server = await startFw(['start', '--port', '0', '--host', '127.0.0.1', '--migrate', '--json'], { cwd: app.dir, env });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await app?.remove();
  });

  itRefusesLargeBodies(() => ({ url: server!.ready.serverUrl as string, headers: { authorization, 'content-type': 'application/json' }, limitText: '1500000 bytes' }));
});
