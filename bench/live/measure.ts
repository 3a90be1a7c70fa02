/**
 * One run: a fresh server of one variant, N subscribers opened and left idle (memory measured), then
 * warm-up writes, then the measured writes and the wait for their last frames.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { backendsCpuUs, type CpuDelta, cpuSince, snapshotCpu } from '../http/system-cpu.ts';
import { liveQueryOf, resetStatements, tenantOfGroup } from './app.ts';
import { interruptCpuUs } from './interrupt-cpu.ts';
import { type ClientHandle, startClient } from './children.ts';
import { startServers } from './servers.ts';
import { type BenchOptions, type Point, rowsPerCommit, type VariantName } from './config.ts';
import type { ClientResult, GcKind, MemorySample, ServerStats, SubscriberSpec, WriteRecord } from './protocol.ts';
import { createWriter } from './writer.ts';

/** fw's default `live.maxSubscriptionsPerTenant`; raised only when one tenant holds more. */
const DEFAULT_TENANT_LIMIT = 10_000;

export interface RunMeasurement {
  variant: VariantName;
  point: Point;
  /** Subscribers opened before the memory baseline (they warm the code paths and the pool). */
  warmSubscribers: number;
  openSec: number;
  /** Each after a regular full GC and after a last-resort one (see `GcKind`). */
  memory: { start: MemorySample; baseline: Record<GcKind, MemorySample>; idle: Record<GcKind, MemorySample> };
  commits: number;
  writerWorstStartLagMs: number;
  /** Send-to-acknowledgement time of each measured commit, as the writer saw it, µs. */
  commitRoundTripsUs: number[];
  drainMs: number;
  drained: boolean;
  server: ServerStats;
  clients: ClientResult[];
  cpu: CpuDelta;
  /** The part of `cpu.databaseCpuUs` spent by the writer's backends: the INSERTs, with fw's capture triggers or bare's NOTIFYs. */
  writerDatabaseCpuUs: number | null;
  /** CPU time of the orchestrating process (the writer) during the measurement, µs. */
  writerCpuUs: number;
  /** Kernel interrupt-context CPU during the measurement (irq + softirq), µs; null off Linux. */
  interruptCpuUs: number | null;
}

export interface RunContext {
  url: string;
  databaseName: string;
  options: BenchOptions;
  log(line: string): void;
}

export async function measureRun(variant: VariantName, point: Point, context: RunContext): Promise<RunMeasurement> {
  const { options, log } = context;
  const { subscribers: total, groups, rate, tenants, shape } = point;
  await resetTables(context.url, point);

  const perTenant = tenants === 'one' ? total : Math.ceil(total / groups);
  const server = await startServers(
    {
      variant,
      url: context.url,
      poolSize: options.poolSize,
      maxSubscriptionsPerTenant: Math.max(DEFAULT_TENANT_LIMIT, perTenant),
      ...(variant === 'baseline' ? { baselineDir: options.baselineDir! } : {}),
    },
    point.processes,
    options.cpuProfDir,
  );
  const clients: ClientHandle[] = [];
  const writer = createWriter(context.url, { variant, groups, tenants, rowsPerCommit: rowsPerCommit(shape) });
  try {
    for (let k = 0; k < options.clientProcesses; k++) clients.push(await startClient(k));
    const start = await server.memory('lastResort');
    // Regular first: the last-resort collection shrinks what the regular one leaves.
    const sample = async () => {
      const regular = await server.memory('regular');
      return { regular, lastResort: await server.memory('lastResort') };
    };

    // Subscriber i joins group i mod G, in subscriber process i mod C, on server process ⌊i / G⌋ mod P:
    // a group's subscribers spread over every process, as a load balancer would spread them.
    const specs: SubscriberSpec[] = Array.from({ length: total }, (_, i) => ({ group: i % groups, tenant: tenantOfGroup(i % groups, tenants) }));
    const open = (from: number, to: number) =>
      Promise.all(
        clients.flatMap((client, k) =>
          server.urls.map((url, p) =>
            client.open(
              url,
              liveQueryOf(shape),
              specs.slice(from, to).filter((_, j) => (from + j) % clients.length === k && Math.floor((from + j) / groups) % server.urls.length === p),
              options.openConcurrency,
            ),
          ),
        ),
      );
    const warmSubscribers = Math.min(100, Math.ceil(total / 10));
    await open(0, warmSubscribers);
    const baseline = await sample();
    const openStarted = performance.now();
    await open(warmSubscribers, total);
    const openSec = (performance.now() - openStarted) / 1000;
    await sleep(1000);
    const idle = await sample();
    const gauges = await server.stats();
    if (gauges.subscriptions !== total) throw new Error(`${variant} server holds ${gauges.subscriptions} subscriptions, expected ${total}.`);
    log(`${variant} ${describePoint(point)}: ${total} streams open in ${openSec.toFixed(1)} s; idle RSS +${Math.round((idle.lastResort.rss - baseline.lastResort.rss) / (total - warmSubscribers))} B/subscriber`);

    const forward = (write: WriteRecord) => {
      for (const client of clients) client.writes([write]);
    };
    const warmupCommits = Math.round(rate * options.warmupSec);
    if (warmupCommits > 0) {
      await writer.write(warmupCommits, rate, false, forward);
      await sleep(1000);
    }

    await server.reset();
    await Promise.all(clients.map((client) => client.start()));
    const cpuBefore = await snapshotCpu(context.databaseName);
    const ownBefore = process.cpuUsage();
    const interruptsBefore = await interruptCpuUs();
    const commitsBefore = writer.commits;
    const written = await writer.write(Math.round(rate * options.durationSec), rate, true, forward);
    const drainStarted = performance.now();
    let drained = false;
    while (performance.now() - drainStarted < options.drainSec * 1000) {
      const progress = await Promise.all(clients.map((client) => client.progress()));
      if (progress.every((p) => p.received >= p.expected)) {
        drained = true;
        break;
      }
      await sleep(50);
    }
    const drainMs = performance.now() - drainStarted;
    // Whatever the servers and PostgreSQL still do for these commits (a group's folded follow-up run) ends within a moment.
    await sleep(200);
    const cpuAfter = await snapshotCpu(context.databaseName);
    const writerPids = await writer.backendPids();
    const own = process.cpuUsage(ownBefore);
    const interruptsAfter = await interruptCpuUs();
    const server_ = await server.stats();
    const results = await Promise.all(clients.map((client) => client.finish()));
    return {
      variant,
      point,
      warmSubscribers,
      openSec,
      memory: { start, baseline, idle },
      commits: writer.commits - commitsBefore,
      writerWorstStartLagMs: writer.worstStartLagMs,
      commitRoundTripsUs: written.map((w) => w.ackUs - w.sentUs),
      drainMs,
      drained,
      server: server_,
      clients: results,
      cpu: cpuSince(cpuBefore, cpuAfter),
      writerDatabaseCpuUs: backendsCpuUs(cpuBefore, cpuAfter, writerPids),
      writerCpuUs: own.user + own.system,
      interruptCpuUs: interruptsBefore === null || interruptsAfter === null ? null : interruptsAfter - interruptsBefore,
    };
  } finally {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await server.close().catch(() => undefined);
    await writer.close().catch(() => undefined);
  }
}

export function describePoint(point: Pick<Point, 'subscribers' | 'groups' | 'rate' | 'tenants' | 'shape' | 'processes'>): string {
  const k = rowsPerCommit(point.shape);
  const shape =
    point.shape === 'items'
      ? 'benchItems'
      : point.shape === 'join'
        ? 'benchJoined (join)'
        : `benchItems, ${k} rows in ${k} groups per commit (${point.shape})`;
  return (
    `${point.subscribers} subscribers / ${point.groups} group${point.groups === 1 ? '' : 's'}` +
    `${point.groups > 1 ? ` (${point.tenants === 'one' ? 'one tenant' : 'a tenant per group'})` : ''} / ${point.rate} commits/s, ${shape}` +
    `${point.processes > 1 ? `, ${point.processes} server processes on one database` : ''}`
  );
}

/** Empties both tables and writes the point's `bench_groups` rows (one per group, in its tenant). */
async function resetTables(url: string, point: Point): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const statement of resetStatements(point.groups, point.tenants)) await client.query(statement);
  } finally {
    await client.end();
  }
}
