/** One measured run: warm-up, reset the server's counters, load, then read every counter. */
import { benchRequests, devHeaders } from './app.ts';
import type { EntryName } from './config.ts';
import { type LoadResult, runLoad } from './load.ts';
import type { ServerStats } from './protocol.ts';
import type { ServerHandle } from './server-handle.ts';
import { type CpuDelta, cpuSince, snapshotCpu } from './system-cpu.ts';

export interface Measurement {
  load: LoadResult;
  server: ServerStats;
  cpu: CpuDelta;
  /** CPU time of this (load generator) process during the run, in microseconds. */
  loadGeneratorCpuUs: number;
}

export interface MeasureOptions {
  connections: number;
  durationSec: number;
  warmupSec: number;
  /** The PostgreSQL database whose backends' CPU is counted, or null (PGlite). */
  databaseName: string | null;
}

export async function measure(server: ServerHandle, entry: EntryName, options: MeasureOptions): Promise<Measurement> {
  const request = { url: server.url + benchRequests[entry].path, headers: { ...devHeaders }, body: benchRequests[entry].body };
  const what = `${server.spec.variant} ${entry} on ${server.spec.database}`;
  if (options.warmupSec > 0) {
    assertClean(what, 'warm-up', await runLoad(request, { connections: options.connections, durationSec: options.warmupSec }));
  }
  await server.resetStats();
  const before = await snapshotCpu(options.databaseName);
  const ownBefore = process.cpuUsage();
  const load = await runLoad(request, { connections: options.connections, durationSec: options.durationSec });
  const own = process.cpuUsage(ownBefore);
  const after = await snapshotCpu(options.databaseName);
  const stats = await server.readStats();
  assertClean(what, 'run', load);
  return { load, server: stats, cpu: cpuSince(before, after), loadGeneratorCpuUs: own.user + own.system };
}

/** Any error, timeout or non-2xx answer makes the whole benchmark fail. */
function assertClean(what: string, phase: string, load: LoadResult): void {
  if (load.non2xx > 0 || load.errors > 0 || load.timeouts > 0 || load.requests === 0) {
    throw new Error(
      `bench/http: ${what} (${phase}) was not clean: ${load.requests} responses, ${load.non2xx} non-2xx, ` +
        `${load.errors} errors, ${load.timeouts} timeouts. The server's stderr above says why.`,
    );
  }
}
