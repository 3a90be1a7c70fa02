/**
 * A seeded property test of the WHOLE live path: random schemas, random liveQueries, random concurrent
 * writers, two fw processes (separate OS processes made with createRuntime, e2e/support/live-path-process.ts)
 * on one PostgreSQL database, and subscribers over the real SSE wire — `GET /live/:name` read here, and
 * the fw client's multiplexed `POST /live` connection (client/live.ts) — some of them slow readers (they
 * stop reading their socket while the writers run, so the server's backpressure applies), some resuming
 * (they drop their stream mid-run and come back with their revision, to the other process sometimes).
 * Every subscriber's data is kept by the client's own live store (client/live-store.ts).
 *
 * The oracle: once the writes have settled, a fresh run of each subscriber's query (same liveQuery, args
 * and identity, directly on the database) must equal the data the subscriber holds. "Settled" is proven,
 * never waited for: every process's log reader has read past the last revision written (a read that
 * began after the last commit), and for every subscriber the server says its group is not running,
 * nothing is queued on its connection, and the client received as many events as the server wrote.
 *
 * Reproducible as far as data goes: the schema, queries, subscribers and every writer's writes come from
 * a seeded PRNG (live-path-model.ts); the interleaving of the concurrent writers and streams is what the
 * machine makes of it. FW_LIVE_PATH_SEED=<n> replays a seed, FW_LIVE_PATH_SEED=random explores one (the
 * seed is printed); FW_LIVE_PATH_CASES, FW_LIVE_PATH_STEPS (write transactions per case),
 * FW_LIVE_PATH_SUBSCRIBERS, FW_LIVE_PATH_QUERIES and FW_LIVE_PATH_WRITERS size the run, and
 * FW_LIVE_PATH_TARGET=postgres|pglite runs one database only. A long run:
 *   FW_LIVE_PATH_SEED=random FW_LIVE_PATH_TARGET=postgres FW_LIVE_PATH_CASES=8 npx vitest run runtime/live/live-path.property.test.ts
 * in a loop. A miss prints the seed, case, subscriber, liveQuery, what it holds and what a fresh run returns.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createLiveConnection, type LiveHandlers, type LiveSubscription } from '../../client/live.ts';
import { createLiveStore, type LiveSource, type LiveStore } from '../../client/live-store.ts';
import { readEventStream } from '../../client/sse.ts';
import { FwError } from '../../client/errors.ts';
import { createTestPostgresDatabase, testDatabaseUrl } from '../../e2e/support/postgres.ts';
import { applyOps, buildApp, randomCase, runLiveQuery, SETUP_SQL, type CaseSize, type CaseSpec, type SubscriberSpec, type WriteStep } from '../../e2e/support/live-path-model.ts';
import { liveEventNames } from '../core/live-protocol.ts';
import { createRuntime } from '../create-runtime.ts';
import { createDatabase, type FwDatabase } from '../db/database.ts';
import { LIVE_CHANNEL } from '../db/live-capture.ts';
import { applyMigration } from '../db/migrate.ts';
import type { LiveStatus, SubscriptionDebug } from './hub.ts';

const SEED = process.env.FW_LIVE_PATH_SEED === 'random' ? (Math.random() * 2 ** 32) >>> 0 : Number(process.env.FW_LIVE_PATH_SEED ?? 20261126) >>> 0;
/** Cases per database (PGlite: one embedded process, slower here, so fewer and smaller cases). */
const CASES = { postgres: positive(process.env.FW_LIVE_PATH_CASES, 2), pglite: positive(process.env.FW_LIVE_PATH_CASES, 1) };
const SIZES: Record<'postgres' | 'pglite', Omit<CaseSize, 'processes'>> = {
  postgres: {
    queries: positive(process.env.FW_LIVE_PATH_QUERIES, 6),
    subscribers: positive(process.env.FW_LIVE_PATH_SUBSCRIBERS, 14),
    writers: positive(process.env.FW_LIVE_PATH_WRITERS, 4),
    steps: positive(process.env.FW_LIVE_PATH_STEPS, 30),
  },
  pglite: {
    queries: positive(process.env.FW_LIVE_PATH_QUERIES, 5),
    subscribers: positive(process.env.FW_LIVE_PATH_SUBSCRIBERS, 8),
    writers: positive(process.env.FW_LIVE_PATH_WRITERS, 3),
    steps: positive(process.env.FW_LIVE_PATH_STEPS, 20),
  },
};
/** Bounds a hang only: every wait below ends on a positive signal. */
const SETTLE_TIMEOUT_MS = 90_000;

function positive(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && Number.isSafeInteger(n) && n > 0 ? n : fallback;
}

const processScript = fileURLToPath(new URL('../../e2e/support/live-path-process.ts', import.meta.url));

// ---- fw processes ----

interface FwProcess {
  url: string;
  stop(): Promise<void>;
}

async function startProcess(specFile: string, databaseUrl: string): Promise<FwProcess> {
  const child: ChildProcess = spawn(process.execPath, [processScript, specFile], { env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => resolve((JSON.parse(line) as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the fw process exited (${code}) before listening: ${stderr}`)));
  });
  return {
    url,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      // Bounds a hang in its shutdown only.
      const hung = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(hung);
    },
  };
}

async function startInProcess(spec: CaseSpec, db: FwDatabase): Promise<FwProcess> {
  const runtime = await createRuntime({ app: buildApp(spec), db, dev: true, live: { pruneIntervalMs: 0, onError: () => undefined }, closeDatabase: false });
  const server = createServer(runtime.handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async stop() {
      await runtime.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// ---- the wire, as a client sees it ----

/** One response stream a subscriber reads: the events it received, and the server's ids of its subscriptions. */
interface Connection {
  process: number;
  received: number;
  /** Server subscription ids by the client's key ('' on GET streams). */
  ids: Map<string, string>;
  open: boolean;
  /** Errors the stream (the client then reconnects, resuming). */
  drop(): void;
}

/** A gate a reader waits at while paused: the socket is not read, so the server's writes back up. */
class Gate {
  #paused = false;
  #waiters: Array<() => void> = [];
  pause(): void {
    this.#paused = true;
  }
  resume(): void {
    this.#paused = false;
    for (const waiter of this.#waiters.splice(0)) waiter();
  }
  async pass(): Promise<void> {
    if (this.#paused) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }
}

/**
 * A response whose body is read only through `gate`, counted (one `data:` line per event) and watched
 * for subscription ids, and that `connection.drop()` breaks.
 */
function watched(response: Response, connection: Connection, gate: Gate): Response {
  if (!response.body) return response;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let partial = '';
  let controllerRef: ReadableStreamDefaultController<Uint8Array> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controllerRef = controller;
    },
    async pull(controller) {
      await gate.pass();
      if (!connection.open) return;
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        connection.open = false;
        controller.error(error);
        return;
      }
      if (!connection.open) return;
      if (chunk.done) {
        connection.open = false;
        controller.close();
        return;
      }
      partial += decoder.decode(chunk.value, { stream: true });
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (!line.startsWith('data:')) continue;
        connection.received++;
        const data = JSON.parse(line.slice(5)) as { subscriptionId?: string; key?: string };
        if (data.subscriptionId) connection.ids.set(data.key ?? '', data.subscriptionId);
      }
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      connection.open = false;
      void reader.cancel(reason).catch(() => undefined);
    },
  });
  connection.drop = () => {
    if (!connection.open) return;
    connection.open = false;
    controllerRef?.error(new Error('dropped by the test (a resume follows)'));
    void reader.cancel().catch(() => undefined);
  };
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * What a subscriber reads through: its own GET stream, or a fw client's `POST /live` connection that
 * several subscribers of one identity share (one stream, a key each). Pausing its gate stops reading
 * the socket; `connection.drop()` breaks the stream, and the client resumes (to `target`).
 */
interface Channel {
  gate: Gate;
  /** The stream it reads now (a dropped one until the client reconnected). */
  connection: Connection | undefined;
  target: number;
  fetch(input: string, init: RequestInit): Promise<Response>;
  /** The fw client's connection (transport `client`). */
  live?: ReturnType<typeof createLiveConnection>;
  drops: number;
}

interface Subscriber {
  spec: SubscriberSpec;
  store: LiveStore;
  channel: Channel;
  close(): void;
}

function devHeaders(spec: SubscriberSpec): Record<string, string> {
  return { 'x-fw-user-id': spec.user, 'x-fw-tenant-id': spec.tenant, 'x-fw-role': 'member' };
}

function openChannel(urls: readonly string[], target: number): Channel {
  const channel: Channel = {
    gate: new Gate(),
    connection: undefined,
    target,
    drops: 0,
    async fetch(input, init) {
      const process = channel.target;
      const response = await fetch(`${urls[process]}${input}`, init);
      const connection: Connection = { process, received: 0, ids: new Map(), open: true, drop: () => undefined };
      channel.connection = connection;
      return watched(response, connection, channel.gate);
    },
  };
  return channel;
}

/**
 * A subscriber whose data the client's live store keeps, fed by the fw client (`client`: subscribers of
 * one identity share its connection, two per identity and process) or by GET /live/:name (`get`).
 */
function openSubscriber(spec: SubscriberSpec, urls: readonly string[], shared: Map<string, Channel>): Subscriber {
  const store = createLiveStore();
  let source: LiveSource;
  let channel: Channel;
  if (spec.transport === 'client') {
    const key = `${spec.tenant}|${spec.user}|${spec.process}|${spec.no % 2}`;
    channel = shared.get(key) ?? openChannel(urls, spec.process);
    shared.set(key, channel);
    const opened = channel;
    channel.live ??= createLiveConnection({
      url: '/live',
      headers: async () => ({ ...devHeaders(spec), 'content-type': 'application/json' }),
      fetch: () => opened.fetch as typeof fetch,
      minRetryMs: 20,
      maxRetryMs: 200,
    });
    const live = channel.live;
    source = { open: (handlers) => live.subscribe(spec.query, { k: spec.arg }, handlers) };
  } else {
    channel = openChannel(urls, spec.process);
    const opened = channel;
    source = { open: (handlers) => getSubscription(spec, handlers, opened.fetch) };
  }
  const stop = store.subscribe('s', source, () => undefined);
  return {
    spec,
    store,
    channel,
    close: () => {
      stop();
      channel.connection?.drop();
    },
  };
}

/**
 * `GET /live/:name`, with the events applied as the fw client does (snapshot: data; up-to-date: keep;
 * reset: drop; error: keep data), reconnecting with `Last-Event-ID` whenever its stream ends.
 */
function getSubscription(spec: SubscriberSpec, handlers: LiveHandlers<unknown>, gatedFetch: (input: string, init: RequestInit) => Promise<Response>): LiveSubscription {
  let revision: number | undefined;
  let closed = false;
  let status: LiveSubscription['status'] = 'connecting';
  const run = async () => {
    while (!closed) {
      const headers: Record<string, string> = { ...devHeaders(spec), ...(revision === undefined ? {} : { 'last-event-id': String(revision) }) };
      try {
        const response = await gatedFetch(`/live/${spec.query}?args=${encodeURIComponent(JSON.stringify({ k: spec.arg }))}`, { headers });
        await readEventStream(response, {
          onEvent: (event) => {
            const data = JSON.parse(event.data) as { revision?: number; result?: unknown; fatal?: boolean; error?: { code: string; message: string } };
            if (event.event === liveEventNames.snapshot) {
              revision = data.revision!;
              handlers.onData(data.result, revision);
              if (status !== 'live') handlers.onStatus?.((status = 'live'));
            } else if (event.event === liveEventNames.upToDate) {
              revision = data.revision!;
              if (status !== 'live') handlers.onStatus?.((status = 'live'));
            } else if (event.event === liveEventNames.reset) {
              revision = undefined;
              handlers.onReset?.();
            } else if (event.event === liveEventNames.error) {
              handlers.onError?.(new FwError({ code: data.error!.code as never, message: data.error!.message, status: 500 }));
            }
          },
        });
      } catch {
        // dropped (a resume follows) or refused: reconnect below
      }
      if (!closed && status === 'live') handlers.onStatus?.((status = 'reconnecting'));
      // A retry delay as the fw client's (not a wait for a state): a refusal must not spin.
      if (!closed) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  void run();
  return {
    close: () => {
      closed = true;
    },
    get status() {
      return status;
    },
    get revision() {
      return revision;
    },
  };
}

// ---- one case ----

interface Totals {
  cases: number;
  writes: number;
  failedWrites: number;
  subscribers: number;
  /** fw client streams (POST /live) that carried several subscriptions. */
  sharedStreams: number;
  slow: number;
  resumes: number;
  blockedSeen: number;
  superseded: number;
  snapshotsSent: number;
  batches: number;
  multiplexed: number;
  noticeWakeups: number;
  /** Groups (at the end) whose every table was read through conditions, of all groups. */
  preciseGroups: number;
  groups: number;
  misses: string[];
}

async function json<T>(url: string): Promise<T> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function until<T>(probe: () => Promise<T | undefined | false>, what: () => string): Promise<T> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** JSON with long strings (the padding of big frames) cut short. */
function brief(value: unknown): string {
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' && v.length > 40 ? `${v.slice(0, 8)}…(${v.length} chars)` : v));
  return text === undefined ? 'undefined' : text.length > 4000 ? `${text.slice(0, 4000)}…` : text;
}

function describeCase(spec: CaseSpec): string {
  return [
    `seed=${spec.seed} case=${spec.caseNo}`,
    `tables: ${JSON.stringify(spec.tables.map((t) => ({ name: t.name, tenantScoped: t.tenantScoped, nullable: t.columns.filter((c) => c.nullable).map((c) => c.name) })))}`,
    ...spec.queries.map((q) => `${q.name}: ${JSON.stringify(q)}`),
  ].join('\n');
}

async function runCase(target: 'postgres' | 'pglite', spec: CaseSpec, totals: Totals): Promise<void> {
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    let db: FwDatabase;
    let databaseUrl = '';
    if (target === 'postgres') {
      const database = await createTestPostgresDatabase();
      cleanups.push(() => database.drop());
      databaseUrl = database.url;
      db = await createDatabase({ url: databaseUrl });
    } else {
      db = await createDatabase({ dataDir: 'memory://' });
    }
    cleanups.push(() => db.close());
    const app = buildApp(spec);
    await applyMigration(db, app.schema);
    for (const statement of SETUP_SQL) await sql.raw(statement).execute(db.admin);
    await applyOps(db.admin, spec.initial);

    const processes: FwProcess[] = [];
    if (target === 'postgres') {
      const dir = await mkdtemp(path.join(tmpdir(), 'fw-live-path-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      const specFile = path.join(dir, 'case.json');
      await writeFile(specFile, JSON.stringify(spec));
      // The first migrates nothing (done above); both start on the same database.
      processes.push(...(await Promise.all([startProcess(specFile, databaseUrl), startProcess(specFile, databaseUrl)])));
    } else {
      processes.push(await startInProcess(spec, db));
    }
    for (const p of processes) cleanups.push(() => p.stop());
    const urls = processes.map((p) => p.url);

    // Subscribe, and wait for everyone's first data.
    const shared = new Map<string, Channel>();
    const subscribers = spec.subscribers.map((s) => openSubscriber({ ...s, process: s.process % processes.length }, urls, shared));
    const channels = [...new Set(subscribers.map((s) => s.channel))];
    cleanups.push(async () => subscribers.forEach((s) => s.close()));
    await until(
      async () => subscribers.every((s) => s.store.getSnapshot('s').data !== undefined) || (subscribers.some((s) => s.store.getSnapshot('s').error) && 'error'),
      () => 'every subscriber to get its first snapshot',
    ).then((outcome) => {
      if (outcome === 'error') {
        const failed = subscribers.find((s) => s.store.getSnapshot('s').error)!;
        throw new Error(`subscriber ${failed.spec.no} (${failed.spec.query}) failed: ${failed.store.getSnapshot('s').error!.message}\n${describeCase(spec)}`);
      }
    });

    // Write, concurrently; slow subscribers stop reading meanwhile, resuming ones drop their stream at their steps.
    for (const s of subscribers) if (s.spec.slow) s.channel.gate.pause();
    let done = 0;
    const afterStep = () => {
      const step = done++;
      for (const s of subscribers) {
        if (!s.spec.resumes.includes(step) || !s.channel.connection?.open) continue;
        s.channel.drops++;
        if (processes.length > 1 && step % 2 === 1) s.channel.target = 1 - s.channel.target;
        s.channel.connection.drop();
      }
    };
    const write = async (step: WriteStep): Promise<boolean> => {
      const writer = spec.writers[step.writer]!;
      try {
        if (writer.via === 'owner') {
          if (step.autocommit) await applyOps(db.admin, step.ops);
          else await db.admin.transaction().execute((trx) => applyOps(trx, step.ops));
        } else if (writer.via === 'app') {
          await db.transaction({ readOnly: false, auth: { kind: 'user', userId: 'writer', tenantId: writer.tenant, role: 'member' } }, (trx) => applyOps(trx, step.ops));
        } else {
          const response = await fetch(`${urls[writer.process % urls.length]}/commands/write`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-fw-user-id': 'writer', 'x-fw-tenant-id': writer.tenant, 'x-fw-role': 'member' },
            body: JSON.stringify({ args: { ops: step.ops } }),
          });
          await response.text();
          return response.ok;
        }
        return true;
      } catch {
        return false; // a foreign key to a row another writer deleted, say: nothing was written
      }
    };
    const outcomes = await Promise.all(
      spec.steps.map(async (steps) => {
        let ok = 0;
        for (const step of steps) {
          if (await write(step)) ok++;
          afterStep();
        }
        return ok;
      }),
    );
    const written = outcomes.reduce((a, b) => a + b, 0);
    totals.writes += written;
    totals.failedWrites += spec.steps.flat().length - written;

    // Settle: slow readers read again; then prove every process and every subscriber caught up.
    let blocked = 0;
    for (const channel of channels) {
      const c = channel.connection;
      const id = c?.ids.values().next().value;
      if (c && id) {
        const debug = await json<SubscriptionDebug>(`${urls[c.process]}/_fw/live/subscriptions/${id}`).catch(() => undefined);
        if (debug?.connection.blocked) blocked++;
      }
      channel.gate.resume();
    }
    const last = (await sql<{ r: string | null }>`select max(revision)::text as r from _fw_live_invalidations`.execute(db.admin)).rows[0]!.r;
    const lastRevision = Number(last ?? 0);
    const readsBefore = await Promise.all(urls.map(async (url) => (await json<LiveStatus>(`${url}/_fw/live/status`)).reader.reads));
    // A read that begins after every commit: a notification makes each reader read.
    await sql`select pg_notify(${LIVE_CHANNEL}, 'live-path settle')`.execute(db.admin);
    await until(
      async () => {
        const statuses = await Promise.all(urls.map((url) => json<LiveStatus>(`${url}/_fw/live/status`)));
        return statuses.every((status, i) => status.reader.revision >= lastRevision && status.reader.reads > readsBefore[i]! && !status.reader.reading);
      },
      () => `every reader to read past revision ${lastRevision}`,
    );
    let lastRound = '';
    let unsettled: string[] = [];
    const debugs = await until(
      async () => {
        unsettled = [];
        const round: Array<{ channel: Channel; debug: SubscriptionDebug; received: number }> = [];
        for (const s of subscribers) if (s.store.getSnapshot('s').status !== 'live') unsettled.push(`subscriber ${s.spec.no}: ${s.store.getSnapshot('s').status}`);
        for (const channel of channels) {
          const c = channel.connection;
          const members = subscribers.filter((s) => s.channel === channel).map((s) => s.spec.no);
          // Every subscription of the stream has had its first event (the client sent them all at once).
          const expected = new Set(subscribers.filter((s) => s.channel === channel).map((s) => `${s.spec.query}|${s.spec.arg}`)).size;
          if (!c || !c.open || c.ids.size < expected) {
            unsettled.push(`subscribers ${members.join(',')}: not connected`);
            continue;
          }
          for (const id of c.ids.values()) {
            const debug = await json<SubscriptionDebug>(`${urls[c.process]}/_fw/live/subscriptions/${id}`).catch(() => undefined);
            if (!debug) {
              unsettled.push(`subscribers ${members.join(',')}: no subscription ${id}`);
              continue;
            }
            const quiet = !debug.group.running && debug.connection.pendingEvents === 0 && !debug.connection.blocked && debug.connection.written === c.received;
            if (!quiet) unsettled.push(`subscribers ${members.join(',')}: ${JSON.stringify({ running: debug.group.running, pending: debug.connection.pendingEvents, written: debug.connection.written, received: c.received })}`);
            round.push({ channel, debug, received: c.received });
          }
        }
        if (unsettled.length > 0) return false;
        // Quiet twice in a row with nothing new: no run began between the two looks.
        const key = JSON.stringify(round.map((r) => [r.debug.subscriptionId, r.debug.group.runs, r.debug.connection.written, r.received]));
        const stable = key === lastRound;
        lastRound = key;
        return stable && round;
      },
      () => `every subscriber to settle: ${unsettled.join('; ')}`,
    );

    // The oracle: a fresh run of each subscriber's query equals what it holds.
    for (const s of subscribers) {
      const query = spec.queries.find((q) => q.name === s.spec.query)!;
      const fresh = await db.transaction({ readOnly: true, auth: { kind: 'user', userId: s.spec.user, tenantId: s.spec.tenant, role: 'member' } }, (trx) =>
        runLiveQuery(trx, query, s.spec.arg),
      );
      const expected = JSON.parse(JSON.stringify(fresh)) as unknown;
      const held = s.store.getSnapshot('s').data;
      if (JSON.stringify(held) !== JSON.stringify(expected)) {
        totals.misses.push(
          [
            `MISS seed=${spec.seed} case=${spec.caseNo} subscriber=${JSON.stringify(s.spec)}`,
            `query ${query.name}: ${JSON.stringify(query)}`,
            `holds:    ${brief(held)}`,
            `expected: ${brief(expected)}`,
            `group: ${JSON.stringify(debugs.find((d) => d.channel === s.channel && d.debug.liveQuery === s.spec.query && (d.debug.args as { k: number }).k === s.spec.arg)?.debug.group)}`,
          ].join('\n'),
        );
      }
    }
    const statuses = await Promise.all(urls.map((url) => json<LiveStatus>(`${url}/_fw/live/status`)));
    totals.cases++;
    totals.subscribers += subscribers.length;
    totals.sharedStreams += channels.filter((c) => subscribers.filter((s) => s.channel === c).length > 1).length;
    totals.slow += subscribers.filter((s) => s.spec.slow).length;
    totals.resumes += channels.reduce((sum, c) => sum + c.drops, 0);
    totals.blockedSeen += blocked;
    totals.superseded += [...new Map(debugs.map((d) => [d.debug.connection.id, d.debug.connection.superseded])).values()].reduce((a, b) => a + b, 0);
    for (const status of statuses) {
      totals.snapshotsSent += status.snapshotsSent;
      totals.batches += status.batches;
      totals.multiplexed += status.multiplexed;
      totals.noticeWakeups += status.noticeWakeups;
      totals.groups += status.groups;
      totals.preciseGroups += status.liveQueries.reduce((sum, q) => sum + q.preciseGroups, 0);
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

const targets = (
  [
  { name: 'postgres', enabled: Boolean(testDatabaseUrl), processes: 2 },
  { name: 'pglite', enabled: true, processes: 1 },
  ] as const
).filter((target) => !process.env.FW_LIVE_PATH_TARGET || target.name === process.env.FW_LIVE_PATH_TARGET);

for (const target of targets) {
  describe.skipIf(!target.enabled)(`the whole live path under random writes (${target.name}, ${target.processes} fw process${target.processes > 1 ? 'es' : ''})`, () => {
    it('every subscriber ends with what a fresh run of its query returns (zero misses)', async () => {
      const totals: Totals = { cases: 0, writes: 0, failedWrites: 0, subscribers: 0, sharedStreams: 0, slow: 0, resumes: 0, blockedSeen: 0, superseded: 0, snapshotsSent: 0, batches: 0, multiplexed: 0, noticeWakeups: 0, preciseGroups: 0, groups: 0, misses: [] };
      const started = Date.now();
      for (let caseNo = 0; caseNo < CASES[target.name]; caseNo++) {
        const spec = randomCase(SEED, caseNo, { ...SIZES[target.name], processes: target.processes });
        try {
          await runCase(target.name, spec, totals);
        } catch (error) {
          throw new Error(`seed=${SEED} case=${caseNo} (${target.name}; replay with FW_LIVE_PATH_SEED=${SEED}): ${(error as Error).message}`, { cause: error });
        }
      }
      const { misses, ...counts } = totals;
      console.log(`[live path property] ${target.name}: seed=${SEED} ${JSON.stringify({ ...counts, misses: misses.length })} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
      expect(misses, `replay with FW_LIVE_PATH_SEED=${SEED}`).toEqual([]);
    }, 600_000);
  });
}
