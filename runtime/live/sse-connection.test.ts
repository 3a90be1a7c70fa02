import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { until as untilShared } from '../../e2e/support/until.ts';
import { keptBytes, SseConnection } from './sse-connection.ts';

/** A server whose one request becomes an SseConnection, and a raw client socket that reads only when told. */
async function openPair(): Promise<{ connection: SseConnection; socket: Socket; server: Server; received: () => string; serverSocket: () => Socket }> {
  let resolveConnection!: (connection: SseConnection) => void;
  const opened = new Promise<SseConnection>((resolve) => (resolveConnection = resolve));
  let response: ServerResponse | undefined;
  const server = createServer((req, res) => {
    response = res;
    resolveConnection(new SseConnection('conn_test', req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  // Small buffers on both ends so backpressure shows after little data.
  socket.setNoDelay(true);
  let text = '';
  socket.on('data', (chunk) => (text += chunk.toString('utf8')));
  socket.write('GET /live/x HTTP/1.1\r\nhost: localhost\r\n\r\n');
  const connection = await opened;
  return { connection, socket, server, received: () => text, serverSocket: () => response!.socket as Socket };
}

/** The SSE events in a raw HTTP/1.1 chunked response, as [event, data] pairs. */
function events(raw: string): Array<{ event: string; data: string }> {
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  // Drop the chunk-size lines of the chunked encoding.
  const unchunked = body.replace(/\r\n[0-9a-f]+\r\n/g, '').replace(/^[0-9a-f]+\r\n/, '');
  return unchunked
    .split('\n\n')
    .map((block) => block.split('\n'))
    .filter((lines) => lines.some((line) => line.startsWith('event: ')))
    .map((lines) => ({
      event: lines.find((line) => line.startsWith('event: '))!.slice(7),
      data: lines.find((line) => line.startsWith('data: '))!.slice(6),
    }));
}

const until = (check: () => boolean, what: string) => untilShared(async () => check(), what, { intervalMs: 10 });

describe('an SSE connection', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('holds what is sent until every hold is released, then writes it in one piece', async () => {
    const { connection, socket, server, received } = await openPair();
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())), () => void socket.destroy(), () => connection.end());
    const pieces: string[] = [];
    socket.on('data', (chunk) => pieces.push(chunk.toString('utf8')));
    connection.open({});
    await until(() => received().includes('fw live'), 'the preamble');
    const releaseOne = connection.hold();
    const releaseTwo = connection.hold();
    connection.send('p1', { event: 'snapshot', id: 1, data: '{"key":"p1"}' });
    connection.send('p2', { event: 'snapshot', id: 2, data: '{"key":"p2"}' });
    releaseOne();
    releaseOne(); // a second call of the same release does nothing
    expect(connection.pendingSlots).toBe(2);
    expect(connection.written).toBe(0);
    const start = pieces.length;
    releaseTwo();
    expect(connection.written).toBe(2);
    await until(() => events(received()).length === 2, 'both held events');
    expect(events(received()).map((e) => e.data)).toEqual(['{"key":"p1"}', '{"key":"p2"}']);
    // Both in one read: written while the socket was corked.
    expect(pieces.slice(start).filter((piece) => piece.includes('event: snapshot')).length).toBe(1);
  });

  it('keeps only the latest unsent event per slot while the client does not read', async () => {
    const { connection, socket, server, received } = await openPair();
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())), () => void socket.destroy(), () => connection.end());
    socket.pause();
    connection.open({});
    // Fill the socket: big snapshots in slot "a" until the response reports backpressure.
    const big = 'x'.repeat(256 * 1024);
    let sent = 0;
    while (!connection.isBlocked && sent < 10_000) connection.send('a', { event: 'snapshot', id: ++sent, data: JSON.stringify({ n: sent, big }) });
    expect(connection.isBlocked).toBe(true);
    const writtenWhenBlocked = connection.written;

    // While blocked, a hundred more snapshots of "a" and three of "b" leave one pending event each.
    for (let n = 1; n <= 100; n++) connection.send('a', { event: 'snapshot', id: sent + n, data: JSON.stringify({ n: sent + n }) });
    for (let n = 1; n <= 3; n++) connection.send('b', { event: 'snapshot', id: n, data: JSON.stringify({ b: n }) });
    expect(connection.pendingSlots).toBe(2);
    expect(connection.superseded).toBe(99 + 2);

    socket.resume();
    await until(() => events(received()).some((e) => e.data === JSON.stringify({ b: 3 })), 'the latest event of slot b');
    const got = events(received());
    // Everything written before the block, then exactly the newest of each slot.
    expect(got).toHaveLength(writtenWhenBlocked + 2);
    expect(got.slice(-2).map((e) => JSON.parse(e.data))).toEqual([{ n: sent + 100 }, { b: 3 }]);
    expect(connection.isBlocked).toBe(false);
    expect(connection.pendingSlots).toBe(0);
  });

  it('holds events sent before open() and writes them after the headers', async () => {
    const { connection, socket, server, received } = await openPair();
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())), () => void socket.destroy(), () => connection.end());
    connection.send('a', { event: 'snapshot', id: 1, data: '{"n":1}' });
    connection.send('a', { event: 'snapshot', id: 2, data: '{"n":2}' });
    connection.open({ 'x-fw-trace-id': 'abc' });
    // An event sent after open() is written after the held one: once it is in, everything held is.
    connection.send('b', { event: 'snapshot', id: 1, data: '{"after":"open"}' });
    await until(() => events(received()).some((e) => e.data === '{"after":"open"}'), 'the event sent after open()');
    expect(received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(received()).toMatch(/content-type: text\/event-stream/i);
    expect(received()).toMatch(/x-fw-trace-id: abc/i);
    expect(events(received())).toEqual([
      { event: 'snapshot', data: '{"n":2}' },
      { event: 'snapshot', data: '{"after":"open"}' },
    ]);
  });

  it('writes a heartbeat comment only after a quiet spell', async () => {
    const { connection, socket, server, received } = await openPair();
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())), () => void socket.destroy(), () => connection.end());
    connection.open({});
    connection.send('a', { event: 'snapshot', id: 1, data: '{}' });
    connection.heartbeat(60_000);
    // The quiet spell is time by nature: wait until the clock has passed it (a precondition, not an assertion).
    const sentAt = Date.now();
    await until(() => Date.now() - sentAt > 10, '10 ms of quiet');
    connection.heartbeat(10);
    await until(() => received().includes(': heartbeat\n\n'), 'a heartbeat');
    // The socket keeps order: a heartbeat written by heartbeat(60_000) would have arrived before this one.
    expect(received().match(/: heartbeat/g)).toHaveLength(1);
    expect(events(received())).toEqual([{ event: 'snapshot', data: '{}' }]);
  });

  it('notices the client going away, tells its listeners once and drops what was pending', async () => {
    const { connection, socket, server } = await openPair();
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    connection.open({});
    let closes = 0;
    connection.onClose(() => closes++);
    socket.destroy();
    await until(() => connection.isClosed, 'the close');
    connection.send('a', { event: 'snapshot', id: 1, data: '{}' });
    expect(connection.pendingSlots).toBe(0);
    expect(closes).toBe(1);
    let late = 0;
    connection.onClose(() => late++);
    expect(late).toBe(1);
  });

  it('sends a prepared event whole, its string parts encoded as UTF-8, each write leaving at once', async () => {
    const { connection, socket, server, received, serverSocket } = await openPair();
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())), () => void socket.destroy(), () => connection.end());
    connection.open({});
    const prefix = keptBytes('event: snapshot\nid: 7\ndata: ');
    const tail = keptBytes(',"result":["ü"]}\n\n');
    connection.send('s1', { parts: [prefix, '{"subscriptionId":"sub_1","key":"ключ ✓"', tail] });
    connection.send('s2', { parts: [prefix, '{"subscriptionId":"sub_2"', tail] });
    // Written through: node:http corks the socket on a write until the next tick; nothing is left corked.
    expect(serverSocket().writableCorked).toBe(0);
    await until(() => events(received()).length === 2, 'both events');
    expect(events(received()).map((e) => JSON.parse(e.data))).toEqual([
      { subscriptionId: 'sub_1', key: 'ключ ✓', result: ['ü'] },
      { subscriptionId: 'sub_2', result: ['ü'] },
    ]);
  });
});
