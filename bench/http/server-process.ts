/**
 * One benchmark server in a process of its own, so the load generator never shares its event loop.
 * Started by `server-handle.ts` with the `ServerSpec` as JSON in argv[2]; talks over the IPC channel:
 * `ready` once listening, and on request a reset of or a snapshot of its counters.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { countDatabaseCalls } from './instrument.ts';
import type { ChildMessage, ParentMessage, ServerStats } from './protocol.ts';
import { createBareVariant } from './variants/bare.ts';
import { createFwVariant } from './variants/fw.ts';
import { createHandWrittenVariant } from './variants/hand-written.ts';
import type { CreateVariant, ServerSpec } from './variants/types.ts';

const create: Record<ServerSpec['variant'], CreateVariant> = {
  fw: createFwVariant,
  handWritten: createHandWrittenVariant,
  bare: createBareVariant,
  // Another checkout's (a), exactly as that checkout serves it (BENCH_BASELINE).
  baseline: async (spec, counter) => {
    const module = (await import(`${spec.baselineDir!}/bench/http/variants/fw.ts`)) as { createFwVariant: CreateVariant };
    return module.createFwVariant({ ...spec, variant: 'fw' }, counter);
  },
};

function send(message: ChildMessage): void {
  process.send!(message);
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2]!) as ServerSpec;
  // Installed before any pool or PGlite exists, so every statement of every variant is counted.
  const counter = await countDatabaseCalls(spec.database);
  const variant = await create[spec.variant](spec, counter);

  let requests = 0;
  const server = createServer((req, res) => {
    requests += 1;
    variant.listener(req, res);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  let since = { requests: 0, calls: 0, statements: 0, cpu: process.cpuUsage(), elu: performance.eventLoopUtilization(), at: performance.now() };
  const mark = () => ({ requests, calls: counter.calls, statements: counter.statements, cpu: process.cpuUsage(), elu: performance.eventLoopUtilization(), at: performance.now() });

  process.on('message', (message: ParentMessage) => {
    if (message.type === 'reset') {
      since = mark();
      send({ type: 'reset' });
    } else if (message.type === 'stats') {
      const cpu = process.cpuUsage(since.cpu);
      const stats: ServerStats = {
        requests: requests - since.requests,
        databaseCalls: counter.calls - since.calls,
        databaseStatements: counter.statements - since.statements,
        cpuUs: cpu.user + cpu.system,
        eventLoopUtilization: performance.eventLoopUtilization(since.elu).utilization,
        elapsedMs: performance.now() - since.at,
      };
      send({ type: 'stats', stats });
    } else if (message.type === 'close') {
      server.closeAllConnections();
      server.close();
      variant.close().finally(() => process.exit(0));
    }
  });
  // The orchestrator is gone (crash, Ctrl-C): do not linger.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready', port: (server.address() as AddressInfo).port });
}

main().catch((error: unknown) => {
  send({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
});
