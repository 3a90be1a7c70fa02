/**
 * `fwjs/testing`: an app's own tests run its entries through the real runtime — policies, args
 * validation, row-level security, JSON on the wire — on a throwaway in-memory database, with the typed
 * client the frontend uses. Like cli/, it composes the other layers (plugin/ to load the app, runtime/
 * to serve it, client/ to call it), so it lives in a folder of its own.
 */
import path from 'node:path';
import { createClient, type DevAuth, type FwClient } from '../client/client.ts';
import type { ApiShape, EntryRef } from '../client/api-types.ts';
import { startApiServer } from '../plugin/dev-server/api-server.ts';
import { loadAppOnce } from '../plugin/load-app-once.ts';
import { createMemoryRuntime } from '../plugin/dev-server/memory-runtime.ts';
import { defaultModelResolver } from '../runtime/ai/models.ts';
import type { AiRuntimeOptions } from '../runtime/ai/ai-runtime.ts';
import { type OutboxOutcome, type OutboxRunSummary } from '../runtime/outbox/worker.ts';
import type { AppDefinition } from '../runtime/core/app-definition.ts';
import type { Clock } from '../runtime/core/clock.ts';
import { parseDuration } from '../runtime/core/duration.ts';

export type { DevAuth } from '../client/client.ts';

export interface TestAppOptions<A extends ApiShape> {
  /** The app directory (default: the working directory, where `fw test` and `npm test` run). */
  root?: string;
  /** The generated `api` (`src/fw/_generated/api.ts`): types `client(…).command/query` (default: untyped refs from the loaded app). */
  api?: A;
  /**
   * Models of `ctx.ai` / `ctx.agent` and `/ai/agents/*`: `mock` (default) is fw's scripted mock, so
   * tests never call a provider; `environment` decides as `fw dev` does (`AI_GATEWAY_API_KEY`, `FW_AI`).
   */
  ai?: 'mock' | 'environment';
}

export interface DeliveredEvents extends OutboxRunSummary {
  /** One per outbox row handled, in order: `delivered`, or `retry`/`dead` with the action's error. */
  outcomes: OutboxOutcome[];
}

export interface TestApp<A extends ApiShape> {
  /** Where the runtime listens (dev mode, dev-headers auth), e.g. for `fetch` or an SSE reader. */
  readonly url: string;
  /** The app as loaded from its sources. */
  readonly app: AppDefinition;
  /** A typed client calling as this identity (sent as dev headers): `client({ userId, tenantId, role }).command('createNote', …)`. */
  client(auth: DevAuth): FwClient<A>;
  /**
   * Delivers the events commands emitted so far to their actions, as `fw dev`'s outbox worker would,
   * until none is due; an action that throws is reported in `outcomes` (as `retry`) and is not retried here.
   */
  deliverEvents(): Promise<DeliveredEvents>;
  /**
   * Moves the test's clock forward by `ms` (or text like `'2h'`): scheduled calls, cron ticks and
   * sleeping workflow runs that fall due by then run at the next `deliverEvents()`, and handlers'
   * `ctx.now()` reads it (SQL's `now()` does not). Nothing waits for wall time. The clock starts a
   * minute ahead of the database's.
   */
  advanceTime(ms: number | `${number}${'ms' | 's' | 'm' | 'h' | 'd'}`): void;
  /** The test's clock now (epoch ms): what `ctx.now()` reads and `ctx.scheduler.runAfter` counts from. */
  now(): number;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Loads the app (as `fw generate` does), migrates its schema into a fresh in-memory PGlite and serves
 * it on a free local port. The outbox worker does not run on its own: `deliverEvents()` runs it.
 *
 * @example
 *   import { api } from '../src/fw/_generated/api.ts';
 *   const fw = await startTestApp({ api });
 *   const alice = fw.client({ userId: 'alice', tenantId: ACME, role: 'member' });
 *   await alice.command('createNote', { title: 'Hello' });
 *   await fw.close();
 */
export async function startTestApp<A extends ApiShape = ApiShape>(options: TestAppOptions<A> = {}): Promise<TestApp<A>> {
  const root = path.resolve(options.root ?? process.cwd());
  const app = await loadAppOnce(root);
  const ai: Omit<AiRuntimeOptions, 'app' | 'db'> = options.ai === 'environment' ? {} : { resolveModel: defaultModelResolver({ FW_AI: 'mock' }) };
  // A clock the test moves (advanceTime), ahead of the database so rows written at its now() are due.
  let now = Date.now() + 60_000;
  const clock: Clock = { now: () => now, at: () => () => {} };
  const outcomes: OutboxOutcome[] = [];
  // The runtime's own worker, not started: deliverEvents() runs it.
  const runtime = await createMemoryRuntime(root, app, {
    auth: 'dev-headers',
    ai,
    clock,
    worker: { start: false, onOutcome: (outcome) => outcomes.push(outcome), onError: () => {} },
  });
  const worker = runtime.worker!;
  let server;
  try {
    server = await startApiServer({ root, port: 0, runtime });
  } catch (error) {
    await runtime.close();
    throw error;
  }
  const { url } = server;
  const close = async () => {
    await server.close();
    await runtime.close();
  };
  return {
    url,
    app,
    client: (devAuth) => createClient({ apiUrl: url, api: options.api ?? (apiOf(app) as A), devAuth }),
    async deliverEvents() {
      const total: DeliveredEvents = { claimed: 0, delivered: 0, retried: 0, waiting: 0, dead: 0, leaseLost: 0, outcomes: [] };
      outcomes.length = 0;
      for (;;) {
        const batch = await worker.runOnce();
        if (batch.claimed === 0) break;
        for (const key of ['claimed', 'delivered', 'retried', 'waiting', 'dead', 'leaseLost'] as const) total[key] += batch[key];
      }
      total.outcomes = [...outcomes];
      return total;
    },
    advanceTime(ms) {
      now += parseDuration(ms, 'advanceTime(ms)');
    },
    now: () => now,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Without the generated api: refs by name from the loaded app (untyped; table sets left empty). */
function apiOf(app: AppDefinition): ApiShape {
  const groups = { command: 'commands', query: 'queries', liveQuery: 'liveQueries' } as const;
  const api = { commands: {}, queries: {}, liveQueries: {} } as Record<(typeof groups)[keyof typeof groups], Record<string, EntryRef>>;
  for (const [name, entry] of app.entries) {
    if (entry.kind in groups) api[groups[entry.kind as keyof typeof groups]][name] = { kind: entry.kind as EntryRef['kind'], name, reads: [], writes: [] };
  }
  return api as unknown as ApiShape;
}
