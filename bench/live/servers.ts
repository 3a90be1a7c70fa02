/**
 * The server side of one run: one server process, or — at a cluster point (`@P`) — P of them on the
 * same database, which fw's processes share as a cluster (runtime/live/hub/cluster.ts). Seen as one
 * server: memory and counters are the sum over the processes, so "snapshot queries per commit" counts
 * reruns cluster-wide.
 */
import { type ServerHandle, startServer } from './children.ts';
import type { GcKind, MemorySample, ServerSpec, ServerStats } from './protocol.ts';

export interface Servers {
  readonly urls: readonly string[];
  memory(gc: GcKind): Promise<MemorySample>;
  reset(): Promise<void>;
  stats(): Promise<ServerStats>;
  close(): Promise<void>;
}

export async function startServers(spec: ServerSpec, count: number, cpuProfDir: string | null): Promise<Servers> {
  const servers: ServerHandle[] = [];
  try {
    // One after the other: the first makes the database's secrets and fw's tables alone.
    for (let i = 0; i < count; i++) servers.push(await startServer(spec, cpuProfDir));
  } catch (error) {
    await Promise.all(servers.map((server) => server.close().catch(() => undefined)));
    throw error;
  }
  return {
    urls: servers.map((server) => server.url),
    memory: async (gc) => sumMemory(await Promise.all(servers.map((server) => server.memory(gc)))),
    reset: async () => void (await Promise.all(servers.map((server) => server.reset()))),
    stats: async () => sumStats(await Promise.all(servers.map((server) => server.stats()))),
    close: async () => void (await Promise.all(servers.map((server) => server.close()))),
  };
}

function sumMemory(samples: MemorySample[]): MemorySample {
  const add = (pick: (sample: MemorySample) => number) => samples.reduce((total, sample) => total + pick(sample), 0);
  const spaces: Record<string, number> = {};
  for (const sample of samples) for (const [space, bytes] of Object.entries(sample.spaces)) spaces[space] = (spaces[space] ?? 0) + bytes;
  return { rss: add((s) => s.rss), heapUsed: add((s) => s.heapUsed), heapTotal: add((s) => s.heapTotal), external: add((s) => s.external), arrayBuffers: add((s) => s.arrayBuffers), spaces };
}

function sumStats(all: ServerStats[]): ServerStats {
  const add = (pick: (stats: ServerStats) => number) => all.reduce((total, stats) => total + pick(stats), 0);
  return {
    snapshotQueries: add((s) => s.snapshotQueries),
    unchangedRuns: add((s) => s.unchangedRuns),
    logReads: add((s) => s.logReads),
    notices: add((s) => s.notices),
    notifications: add((s) => s.notifications),
    framesSent: add((s) => s.framesSent),
    connections: add((s) => s.connections),
    subscriptions: add((s) => s.subscriptions),
    groups: add((s) => s.groups),
    cpuUs: add((s) => s.cpuUs),
    // The busiest process: the one whose loop delays frames first.
    eventLoopUtilization: Math.max(...all.map((s) => s.eventLoopUtilization)),
    databaseCalls: add((s) => s.databaseCalls),
    elapsedMs: Math.max(...all.map((s) => s.elapsedMs)),
  };
}
