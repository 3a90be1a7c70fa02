import { createServer, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../e2e/support/until.ts';
import { FwError, readEventStream, type SseEvent } from './index.ts';

// CRLF and CR line ends, a comment, retry, ids, an event name, multi-line data, and characters of
// 2, 3 and 4 UTF-8 bytes: split at every byte, each one lands across a chunk boundary somewhere.
const stream = Buffer.from(
  ': heartbeat\n\n' +
    'retry: 2500\n\n' +
    'id: 7\nevent: snapshot\ndata: {"notes":[]}\n\n' +
    'data: first line\ndata: second line\n\n' +
    'id: 8\r\ndata: café ☕ 𝄞\r\n\r\n' +
    'data: bare cr\r\r' +
    'data: no final blank line, so never dispatched\n',
);

const expectedEvents: SseEvent[] = [
  { id: '7', event: 'snapshot', data: '{"notes":[]}' },
  { id: undefined, event: undefined, data: 'first line\nsecond line' },
  { id: '8', event: undefined, data: 'café ☕ 𝄞' },
  { id: undefined, event: undefined, data: 'bare cr' },
];

const sseHeaders = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' };

async function writeInChunks(res: ServerResponse, bytes: Buffer, size: number): Promise<void> {
  res.writeHead(200, sseHeaders);
  for (let at = 0; at < bytes.length; at += size) {
    res.write(bytes.subarray(at, at + size));
    // Pacing only (no assertion depends on it): each write tends to leave as its own chunk. The
    // events must be the same however the bytes are grouped, which '/whole' holds too.
    await sleep(1);
  }
  res.end();
}

describe('readEventStream over a real HTTP stream', () => {
  let server: Server;
  let url: string;
  /** The requests (path and query) whose response the client abandoned before it ended. */
  const closedEarly: string[] = [];
  /** The open '/cut' responses by query, for the test to break when it chooses. */
  const cuts = new Map<string, ServerResponse>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      res.on('close', () => {
        if (!res.writableFinished) closedEarly.push(req.url ?? '');
      });
      const route = new URL(req.url ?? '/', 'http://localhost').pathname;
      if (route === '/bytes') return void writeInChunks(res, stream, 1);
      if (route === '/odd') return void writeInChunks(res, stream, 7);
      if (route === '/whole') return void res.writeHead(200, sseHeaders).end(stream);
      if (route === '/open') {
        res.writeHead(200, sseHeaders);
        res.write('data: one\n\n');
        return; // never ends: only the client can stop it
      }
      if (route === '/cut') {
        res.writeHead(200, sseHeaders);
        res.write('data: before the cut\n\n');
        cuts.set(req.url ?? '', res);
        return;
      }
      if (route === '/denied') {
        const body = { ok: false, error: { code: 'unauthenticated', message: 'Sign in.', diagnostics: [] }, traceId: 't-1234567890' };
        return void res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      }
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not a stream</html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    server?.close();
  });

  async function read(path: string, signal?: AbortSignal) {
    const events: SseEvent[] = [];
    const comments: string[] = [];
    const retries: number[] = [];
    await readEventStream(await fetch(url + path), {
      onEvent: (event) => events.push(event),
      onComment: (comment) => comments.push(comment),
      onRetry: (ms) => retries.push(ms),
      ...(signal ? { signal } : {}),
    });
    return { events, comments, retries };
  }

  for (const path of ['/bytes', '/odd', '/whole']) {
    it(`parses the same events however the stream is split (${path})`, async () => {
      const { events, comments, retries } = await read(path);
      expect(events).toEqual(expectedEvents);
      expect(comments).toEqual(['heartbeat']);
      expect(retries).toEqual([2500]);
    });
  }

  it('resolves when the signal aborts, and closes the connection', async () => {
    const controller = new AbortController();
    const events: string[] = [];
    await readEventStream(await fetch(`${url}/open?by=abort`, { signal: controller.signal }), {
      signal: controller.signal,
      onEvent: (event) => {
        events.push(event.data);
        controller.abort();
      },
    });
    expect(events).toEqual(['one']);
    await until(async () => closedEarly.includes('/open?by=abort'), 'the server to see the stream abandoned', { intervalMs: 10 });
  });

  it('rejects with what a callback threw, and closes the connection', async () => {
    const failure = new Error('render failed');
    const reading = readEventStream(await fetch(`${url}/open?by=throw`), {
      onEvent: () => {
        throw failure;
      },
    });
    await expect(reading).rejects.toBe(failure);
    await until(async () => closedEarly.includes('/open?by=throw'), 'the server to see the stream abandoned', { intervalMs: 10 });
  });

  it('rejects with network_error when the connection breaks mid-stream', async () => {
    const events: string[] = [];
    const reading = readEventStream(await fetch(`${url}/cut?by=test`), { onEvent: (event) => events.push(event.data) });
    // Broken only once the client has read what came before, so the test knows what it must have got.
    await until(async () => events.length === 1, 'the event before the cut', { intervalMs: 10 });
    cuts.get('/cut?by=test')!.socket!.destroy();
    const error = await reading.then(
      () => expect.unreachable('a cut stream must not look finished'),
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(FwError);
    expect(error).toMatchObject({ code: 'network_error', status: 0 });
    expect(events).toEqual(['before the cut']);
  });

  it("rejects with the runtime's FwError for an error envelope, and bad_response for other content", async () => {
    await expect(read('/denied')).rejects.toMatchObject({ code: 'unauthenticated', status: 401, traceId: 't-1234567890' });
    await expect(read('/page')).rejects.toMatchObject({ code: 'bad_response', status: 200 });
  });
});
