import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readEventStream, type SseEvent } from '../../client/sse.ts';
import type { FwDatabase } from '../../runtime/db/database.ts';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import type { LiveHub, LiveOptions } from '../../runtime/live/hub.ts';
import { createRuntime } from '../../runtime/create-runtime.ts';

/** A dev-mode runtime with live queries, served on a free local port; for tests. */
export interface LiveTestRuntime {
  hub: LiveHub;
  url: string;
  /** Closes the hub, then the server (dropping open streams); the database stays open. */
  close(): Promise<void>;
}

export async function serveLiveRuntime(app: AppDefinition, db: FwDatabase, options: LiveOptions = {}): Promise<LiveTestRuntime> {
  const runtime = await createRuntime({ app, db, dev: true, live: { pruneIntervalMs: 0, ...options }, closeDatabase: false });
  const hub = runtime.live!;
  const server = createServer(runtime.handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    hub,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      await runtime.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A live stream opened with fetch, its events queued for `next()`; for tests and benchmarks. */
export interface EventStream {
  readonly status: number;
  readonly headers: Headers;
  /** The next event (waits for it; rejects if the stream ends first or after `timeoutMs`). */
  next(timeoutMs?: number): Promise<SseEvent & { json: any }>;
  /**
   * The next event that satisfies `accept`, skipping others. For waits where an extra snapshot is
   * legitimate: a runtime may re-send unchanged data when it cannot prove nothing changed (e.g. while
   * a transaction elsewhere in the PostgreSQL cluster holds the visibility horizon back).
   */
  nextWhere(accept: (event: SseEvent & { json: any }) => boolean, timeoutMs?: number): Promise<SseEvent & { json: any }>;
  /** Events received and not yet taken. */
  readonly buffered: number;
  comments: string[];
  close(): void;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
}

export async function openEventStream(url: string, init: RequestInit = {}): Promise<EventStream> {
  const controller = new AbortController();
  const response = await fetch(url, { ...init, signal: controller.signal });
  const queue: Array<SseEvent & { json: any }> = [];
  const waiters: Array<{ resolve: (event: SseEvent & { json: any }) => void; reject: (error: Error) => void }> = [];
  const comments: string[] = [];
  let finished: Error | undefined;
  const ended = readEventStream(response, {
    signal: controller.signal,
    onComment: (comment) => comments.push(comment),
    onEvent: (event) => {
      const parsed = { ...event, json: JSON.parse(event.data) };
      const waiter = waiters.shift();
      if (waiter) waiter.resolve(parsed);
      else queue.push(parsed);
    },
  })
    .then(() => new Error('the stream ended'))
    .catch((error: Error) => error)
    .then((error) => {
      finished = error;
      for (const waiter of waiters.splice(0)) waiter.reject(error);
    });
  const stream: EventStream = {
    status: response.status,
    headers: response.headers,
    comments,
    async nextWhere(accept, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const event = await stream.next(Math.max(1, deadline - Date.now()));
        if (accept(event)) return event;
      }
    },
    get buffered() {
      return queue.length;
    },
    next(timeoutMs = 30_000) {
      const queued = queue.shift();
      if (queued) return Promise.resolve(queued);
      if (finished) return Promise.reject(finished);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no event within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          resolve: (event) => {
            clearTimeout(timer);
            resolve(event);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        });
      });
    },
    close: () => controller.abort(),
    ended,
  };
  return stream;
}
