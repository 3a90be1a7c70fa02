/**
 * One live server (fw or bare) in a process of its own, so the subscribers never share its event
 * loop. Started by `children.ts` with the `ServerSpec` as JSON in argv[2] and `--expose-gc`; answers
 * requests over IPC: a memory sample after a full GC, a reset or a snapshot of its counters, close.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import { countDatabaseCalls } from '../http/instrument.ts';
import type { GcKind, MemorySample, Ready, Reply, Request, ServerRequest, ServerSpec, ServerStats } from './protocol.ts';
import { createBareVariant } from './variants/bare.ts';
import { createFwVariant } from './variants/fw.ts';
import type { CreateVariant } from './variants/types.ts';

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2]!) as ServerSpec;
  // Installed before any pool exists, so every statement of the process is counted.
  const calls = await countDatabaseCalls('postgres');
  const create: CreateVariant =
    spec.variant === 'baseline'
      ? ((await import(`${spec.baselineDir!}/bench/live/variants/fw.ts`)) as { createFwVariant: CreateVariant }).createFwVariant
      : spec.variant === 'fw'
        ? createFwVariant
        : createBareVariant;
  const variant = await create(spec);

  const server = createServer(variant.listener);
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));

  const mark = () => ({ counters: variant.counters(), calls: calls.calls, cpu: process.cpuUsage(), elu: performance.eventLoopUtilization(), at: performance.now() });
  let since = mark();

  const handle = async (request: ServerRequest): Promise<unknown> => {
    switch (request.type) {
      case 'memory':
        return memory(request.gc);
      case 'reset':
        since = mark();
        return null;
      case 'stats': {
        const cpu = process.cpuUsage(since.cpu);
        const now = variant.counters();
        const stats: ServerStats = {
          ...now,
          snapshotQueries: now.snapshotQueries - since.counters.snapshotQueries,
          unchangedRuns: now.unchangedRuns - since.counters.unchangedRuns,
          logReads: now.logReads - since.counters.logReads,
          notices: now.notices - since.counters.notices,
          notifications: now.notifications - since.counters.notifications,
          framesSent: now.framesSent - since.counters.framesSent,
          cpuUs: cpu.user + cpu.system,
          eventLoopUtilization: performance.eventLoopUtilization(since.elu).utilization,
          databaseCalls: calls.calls - since.calls,
          elapsedMs: performance.now() - since.at,
        };
        return stats;
      }
      case 'close':
        server.closeAllConnections();
        server.close();
        await variant.close();
        setImmediate(() => process.exit(0));
        return null;
    }
  };

  process.on('message', (message: Request<ServerRequest>) => {
    handle(message).then(
      (result) => process.send!({ id: message.id, ok: true, result } satisfies Reply),
      (error: Error) => process.send!({ id: message.id, ok: false, message: error.stack ?? error.message } satisfies Reply),
    );
  });
  // The orchestrator is gone (crash, Ctrl-C): do not linger.
  process.on('disconnect', () => process.exit(0));
  process.send!({ type: 'ready', port: (server.address() as AddressInfo).port } satisfies Ready);
}

/** Memory after full collections (the process runs with --expose-gc), so garbage does not count. */
async function memory(kind: GcKind): Promise<MemorySample> {
  const gc = (globalThis as { gc?: (options?: object) => void }).gc;
  if (!gc) throw new Error('the server process needs --expose-gc');
  for (let i = 0; i < 3; i++) {
    gc(kind === 'lastResort' ? { type: 'major', execution: 'sync', flavor: 'last-resort' } : { type: 'major', execution: 'sync' });
    await sleep(50);
  }
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, space.physical_space_size]));
  return { rss, heapUsed, heapTotal, external, arrayBuffers, spaces };
}

main().catch((error: unknown) => {
  process.send!({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies Ready);
  process.exit(1);
});
