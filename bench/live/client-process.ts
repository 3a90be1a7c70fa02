/**
 * A subscriber process: opens one `GET /live/<query>?args={"group":g}` stream per subscriber (raw
 * node:http, no keep-alive agent, no socket limit; `benchItems` or `benchJoined`), parses the SSE with
 * `eventsource-parser`, and notes when each written row first reaches each subscriber.
 *
 * Arrival times are taken when a chunk comes off the socket, before any parsing: parsing runs after
 * the whole batch of ready sockets was read (setImmediate), so parsing one subscriber's frame does
 * not delay the time stamp of the next one. Times are `process.hrtime` (CLOCK_MONOTONIC, shared by
 * every process of the machine), so they compare directly with the writer's commit times.
 */
import http from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { ClientProgress, ClientRequest, ClientResult, Ready, Reply, Request, SubscriberSpec, WriteRecord } from './protocol.ts';
import { devHeaders, groupLabel, type LiveQueryName, livePath } from './app.ts';

interface Row {
  seq: number;
  n: number;
  grp: number;
  /** `benchJoined` only: the joined `bench_groups` row's label. */
  label?: string;
}

interface Subscriber {
  readonly group: number;
  /** The newest `n` of the group this subscriber has seen. */
  lastN: number;
  opened: boolean;
  request: http.ClientRequest | undefined;
  parser: EventSourceParser;
  onFirst: ((error?: Error) => void) | undefined;
}

const OPEN_TIMEOUT_MS = 60_000;
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
const subscribers: Subscriber[] = [];
/** Subscribers per group in this process. */
const perGroup = new Map<number, number>();
/** seq → arrival times (µs) of its row, one per subscriber that got it. */
const arrivals = new Map<number, number[]>();
const writes: WriteRecord[] = [];
let measuring = false;
const counts = { frames: 0, skipped: 0, wrongRows: 0, disconnects: 0, errorEvents: 0 };
let reportedProblem = false;
let started: { cpu: NodeJS.CpuUsage; elu: ReturnType<typeof performance.eventLoopUtilization>; at: number } | undefined;
const loopDelay = monitorEventLoopDelay({ resolution: 1 });

// ---- reading: stamp on arrival, parse after the batch ----

let queuedSubscribers: Subscriber[] = [];
let queuedChunks: string[] = [];
let queuedAt: number[] = [];
let flushScheduled = false;
let currentAt = 0;

function onChunk(subscriber: Subscriber, chunk: string): void {
  queuedSubscribers.push(subscriber);
  queuedChunks.push(chunk);
  queuedAt.push(nowUs());
  if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flush);
  }
}

function flush(): void {
  flushScheduled = false;
  const subs = queuedSubscribers;
  const chunks = queuedChunks;
  const at = queuedAt;
  queuedSubscribers = [];
  queuedChunks = [];
  queuedAt = [];
  for (let i = 0; i < subs.length; i++) {
    currentAt = at[i]!;
    subs[i]!.parser.feed(chunks[i]!);
  }
}

function onEvent(subscriber: Subscriber, event: string | undefined, data: string): void {
  if (event === 'error') {
    counts.errorEvents++;
    problem(`error event on a stream of group ${subscriber.group}: ${data}`);
    return;
  }
  if (event !== 'snapshot') return;
  const rows = (JSON.parse(data) as { result: Row[] }).result;
  if (measuring) counts.frames++;
  let newest = subscriber.lastN;
  let fresh = 0;
  // Rows come newest first.
  for (const row of rows) {
    if (row.grp !== subscriber.group || (row.label !== undefined && row.label !== groupLabel(subscriber.group))) {
      counts.wrongRows++;
      continue;
    }
    if (row.n <= subscriber.lastN) break;
    if (subscriber.opened) {
      fresh++;
      let list = arrivals.get(row.seq);
      if (!list) arrivals.set(row.seq, (list = []));
      list.push(currentAt);
    }
    if (row.n > newest) newest = row.n;
  }
  // Writes of the group between the last row seen and the newest one that no snapshot carried.
  if (subscriber.opened && newest - subscriber.lastN > fresh) counts.skipped += newest - subscriber.lastN - fresh;
  subscriber.lastN = newest;
  if (!subscriber.opened) {
    subscriber.opened = true;
    subscriber.onFirst?.();
    subscriber.onFirst = undefined;
  }
}

function problem(message: string): void {
  if (reportedProblem) return;
  reportedProblem = true;
  process.stderr.write(`bench/live subscriber process: ${message} (further problems are only counted)\n`);
}

// ---- opening ----

function openOne(baseUrl: string, query: LiveQueryName, spec: SubscriberSpec): Promise<void> {
  const subscriber: Subscriber = {
    group: spec.group,
    lastN: 0,
    opened: false,
    request: undefined,
    parser: undefined as unknown as EventSourceParser,
    onFirst: undefined,
  };
  subscriber.parser = createParser({ onEvent: (message) => onEvent(subscriber, message.event, message.data) });
  subscribers.push(subscriber);
  perGroup.set(spec.group, (perGroup.get(spec.group) ?? 0) + 1);

  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`no first snapshot within ${OPEN_TIMEOUT_MS} ms`)), OPEN_TIMEOUT_MS);
    const fail = (error: Error) => {
      clearTimeout(timer);
      if (subscriber.onFirst) {
        subscriber.onFirst = undefined;
        reject(new Error(`subscription to group ${spec.group} (tenant ${spec.tenant}): ${error.message}`));
      }
    };
    subscriber.onFirst = (error) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve();
    };
    const request = http.get(baseUrl + livePath(query, spec.group), { agent, headers: devHeaders(spec.tenant, spec.group) }, (response) => {
      response.setEncoding('utf8');
      if (response.statusCode !== 200) {
        let body = '';
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => fail(new Error(`HTTP ${response.statusCode}: ${body.slice(0, 500)}`)));
        return;
      }
      response.on('data', (chunk: string) => onChunk(subscriber, chunk));
      response.on('end', () => {
        counts.disconnects++;
        problem(`a stream of group ${spec.group} ended`);
        fail(new Error('the stream ended before its first snapshot'));
      });
    });
    subscriber.request = request;
    request.on('error', (error) => {
      if (subscriber.opened) {
        counts.disconnects++;
        problem(`a stream of group ${spec.group} failed: ${error.message}`);
      }
      fail(error);
    });
  });
}

async function openAll(baseUrl: string, query: LiveQueryName, specs: SubscriberSpec[], concurrency: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < specs.length) await openOne(baseUrl, query, specs[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, specs.length) }, worker));
}

// ---- figures ----

function progress(): ClientProgress & { latenciesUs?: Float64Array } {
  let expected = 0;
  let received = 0;
  for (const write of writes) {
    if (!write.measured) continue;
    for (const row of write.rows) {
      expected += perGroup.get(row.group) ?? 0;
      received += arrivals.get(row.seq)?.length ?? 0;
    }
  }
  return { expected, received };
}

function finish(): ClientResult {
  measuring = false;
  loopDelay.disable();
  const cpu = process.cpuUsage(started?.cpu);
  const { expected, received } = progress();
  const latenciesUs = new Float64Array(received);
  let i = 0;
  for (const write of writes) {
    if (!write.measured) continue;
    for (const row of write.rows) for (const at of arrivals.get(row.seq) ?? []) latenciesUs[i++] = at - write.ackUs;
  }
  const ms = (ns: number) => Math.round(ns / 10_000) / 100;
  return {
    expected,
    received,
    latenciesUs,
    frames: counts.frames,
    skipped: counts.skipped,
    wrongRows: counts.wrongRows,
    disconnects: counts.disconnects,
    loopDelayMs: { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) },
    eventLoopUtilization: started ? performance.eventLoopUtilization(started.elu).utilization : 0,
    cpuUs: cpu.user + cpu.system,
    elapsedMs: started ? performance.now() - started.at : 0,
  };
}

async function handle(request: ClientRequest): Promise<unknown> {
  switch (request.type) {
    case 'open':
      await openAll(request.baseUrl, request.query, request.subscribers, request.concurrency);
      return null;
    case 'writes':
      writes.push(...request.writes);
      return null;
    case 'start':
      measuring = true;
      loopDelay.reset();
      loopDelay.enable();
      started = { cpu: process.cpuUsage(), elu: performance.eventLoopUtilization(), at: performance.now() };
      return null;
    case 'progress':
      return progress();
    case 'finish':
      return finish();
    case 'close':
      for (const subscriber of subscribers) subscriber.request?.destroy();
      agent.destroy();
      setImmediate(() => process.exit(0));
      return null;
  }
}

process.on('message', (message: Request<ClientRequest>) => {
  handle(message).then(
    (result) => process.send!({ id: message.id, ok: true, result } satisfies Reply),
    (error: Error) => process.send!({ id: message.id, ok: false, message: error.stack ?? error.message } satisfies Reply),
  );
});
process.on('disconnect', () => process.exit(0));
process.send!({ type: 'ready' } satisfies Ready);
