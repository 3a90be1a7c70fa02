/** Turns the measurements into the figures of the JSON document: per run, fw/bare ratios, targets and notes. */
import { type Point, rowsPerCommit, type Shape, type VariantName } from './config.ts';
import type { RunMeasurement } from './measure.ts';
import type { MemorySample } from './protocol.ts';

export interface RunFigures {
  variant: VariantName;
  subscribers: number;
  groups: number;
  rate: number;
  tenants: Point['tenants'];
  /** `items` (benchItems, one row per commit), `join` (benchJoined, one row per commit) or `bulkK` (benchItems, K rows in K groups per commit). */
  shape: Shape;
  /** Server processes on the one database (a cluster point, `@P`); its counters are their sum. */
  processes: number;
  /** Rows each commit inserts, each in another group: K for `bulkK`, else 1. */
  rowsPerCommit: number;
  /** Commit-to-frame latency over every (subscriber, measured commit) delivery of every round. */
  latencyMs: { p50: number; p95: number; p99: number; max: number; min: number } | null;
  /** Deliveries: one per row of a measured commit per subscriber of the row's group. `lost` and `wrongRows` must be 0. */
  frames: { expected: number; received: number; lost: number; skipped: number; wrongRows: number; disconnects: number };
  /** Snapshot events the subscribers received and the server reports writing, during the measurement. */
  snapshotEvents: { received: number; sentByServer: number };
  commits: number;
  /**
   * Groups a commit wakes, by the model of table × tenant invalidation: for fw in the `one` layout every
   * group of the tenant, else the written groups; bare only the written groups (one notification each).
   */
  affectedGroupsPerCommit: number;
  /** Groups whose result a commit changes: the groups it writes (1, or K for `bulkK`). */
  changedGroupsPerCommit: number;
  snapshotQueriesPerCommit: number;
  snapshotQueriesPerAffectedGroup: number;
  /** Snapshot queries per affected group per wakeup (fw: per read of the invalidation log; bare: per notification). */
  snapshotQueriesPerAffectedGroupPerWakeup: number | null;
  unchangedRunsPerCommit: number;
  wakeupsPerCommit: number;
  /** Notifications received by the server's LISTEN connection per commit. */
  notificationsPerCommit: number;
  roundTripsPerCommit: number;
  cpuMsPerCommit: number;
  cpuUsPerDelivery: number | null;
  serverEventLoopUtilization: number;
  databaseCpuMsPerCommit: number | null;
  /** The writer's share of it: the INSERT (fw: with its capture triggers; bare: with its NOTIFYs). The rest is the server's reads: snapshots, fw's log reads and listener. */
  writesDatabaseCpuMsPerCommit: number | null;
  /**
   * (RSS with all N subscribers idle − RSS with the first few) / the rest, after a last-resort GC
   * (which also shrinks V8's young generation): the memory each subscriber keeps. Median over rounds.
   */
  rssBytesPerIdleSubscriber: number;
  /** The same after a regular full GC: includes the young generation V8 grew while the streams opened. */
  rssBytesPerIdleSubscriberRegularGc: number;
  heapBytesPerIdleSubscriber: number;
  memory: {
    rssStartMiB: number;
    rssIdleMiB: number;
    heapIdleMiB: number;
    warmSubscribers: number;
    /** Where `rssBytesPerIdleSubscriber` goes: resident pages per V8 heap space, and the rest (native: sockets, HTTP parsers, malloc). */
    perIdleSubscriber: { v8Resident: Record<string, number>; outsideV8Heap: number };
  };
  openSubscribersPerSec: number;
  /** Event-loop delay of the subscriber process(es) during the measurement: how late arrival stamps can be. */
  clientLoopLagMs: { p50: number; p99: number; max: number };
  clientEventLoopUtilization: number;
  machineCpuBusy: number | null;
  /** Share of all cores the kernel spent in interrupt context (irq + softirq: much of loopback TCP). */
  interruptCpuShare: number | null;
  /**
   * Share of all cores used by processes that are not part of the run (machine busy minus server,
   * subscriber processes, writer, the benchmark database's backends and interrupt time; PostgreSQL's
   * background processes count here). Above ~0.05 the machine was not quiet.
   */
  otherProcessesCpuShare: number | null;
  writerWorstStartLagMs: number;
  /**
   * The writer's commits from send to acknowledgement. Latency is measured from the acknowledgement,
   * so when the writer's process waits for a core (a max far above p50), latencies of those commits
   * read short, even negative (`latencyMs.min` < 0).
   */
  writerCommitMs: { p50: number; p99: number; max: number };
  drainMs: number;
  drained: boolean;
  /** Each round on its own (a fresh server process each): the spread shows the noise. */
  rounds: Array<{ latencyP50Ms: number | null; latencyP99Ms: number | null; cpuMsPerCommit: number; rssBytesPerIdleSubscriber: number; lost: number }>;
}

/** The figures of one variant at one point, over its rounds. */
export function runFigures(rounds: RunMeasurement[]): RunFigures {
  const first = rounds[0]!;
  const { point } = first;
  const commits = sum(rounds.map((m) => m.commits));
  const clients = rounds.flatMap((m) => m.clients);
  const total = (pick: (s: RunMeasurement['server']) => number) => sum(rounds.map((m) => pick(m.server)));
  const snapshotQueries = total((s) => s.snapshotQueries);
  const cpuUs = total((s) => s.cpuUs);
  const expected = sum(clients.map((c) => c.expected));
  const received = sum(clients.map((c) => c.received));
  const latencies = concat(clients.map((c) => c.latenciesUs)).sort();
  const changed = rowsPerCommit(point.shape);
  const isFw = first.variant !== 'bare';
  const affected = isFw && point.tenants === 'one' ? point.groups : changed;
  // fw: a notice (early run) or a read of the log wakes every affected group of the commits it carries
  // (a read that follows a notice, or folds two, wakes none or one); bare: a notification wakes one group.
  const affectedPerWakeup = isFw ? affected : 1;
  const wakeups = isFw ? total((s) => s.logReads + s.notices) : total((s) => s.notifications);
  const databaseCpu = rounds.every((m) => m.cpu.databaseCpuUs !== null) ? sum(rounds.map((m) => m.cpu.databaseCpuUs!)) : null;
  const writesDatabaseCpu = rounds.every((m) => m.writerDatabaseCpuUs !== null) ? sum(rounds.map((m) => m.writerDatabaseCpuUs!)) : null;
  const machine = rounds.every((m) => m.cpu.machine !== null);
  const perRound = rounds.map((m) => {
    const idle = m.point.subscribers - m.warmSubscribers;
    const perSubscriber = (gc: 'regular' | 'lastResort', pick: (x: MemorySample) => number) => (pick(m.memory.idle[gc]) - pick(m.memory.baseline[gc])) / idle;
    const sorted = concat(m.clients.map((c) => c.latenciesUs)).sort();
    return {
      idle,
      rss: perSubscriber('lastResort', (x) => x.rss),
      rssRegular: perSubscriber('regular', (x) => x.rss),
      heap: perSubscriber('lastResort', (x) => x.heapUsed),
      outside: perSubscriber('lastResort', (x) => x.rss - resident(x)),
      spaces: Object.fromEntries(Object.keys(m.memory.idle.lastResort.spaces).map((space) => [space, perSubscriber('lastResort', (x) => x.spaces[space] ?? 0)])),
      open: idle / m.openSec,
      busy: m.cpu.machine ? m.cpu.machine.busyUs / m.cpu.machine.capacityUs : 0,
      interrupts: m.cpu.machine && m.interruptCpuUs !== null ? m.interruptCpuUs / m.cpu.machine.capacityUs : null,
      other: m.cpu.machine
        ? Math.max(
            0,
            m.cpu.machine.busyUs - m.server.cpuUs - sum(m.clients.map((c) => c.cpuUs)) - m.writerCpuUs - (m.cpu.databaseCpuUs ?? 0) - (m.interruptCpuUs ?? 0),
          ) / m.cpu.machine.capacityUs
        : 0,
      figures: {
        latencyP50Ms: sorted.length ? ms(quantile(sorted, 0.5)) : null,
        latencyP99Ms: sorted.length ? ms(quantile(sorted, 0.99)) : null,
        cpuMsPerCommit: round(m.server.cpuUs / m.commits / 1000, 3),
        rssBytesPerIdleSubscriber: Math.round((m.memory.idle.lastResort.rss - m.memory.baseline.lastResort.rss) / idle),
        lost: sum(m.clients.map((c) => c.expected - c.received)),
      },
    };
  });
  const spaces = [...new Set(perRound.flatMap((r) => Object.keys(r.spaces)))];
  return {
    variant: first.variant,
    subscribers: point.subscribers,
    groups: point.groups,
    rate: point.rate,
    tenants: point.tenants,
    shape: point.shape,
    processes: point.processes,
    rowsPerCommit: changed,
    latencyMs:
      latencies.length === 0
        ? null
        : {
            p50: ms(quantile(latencies, 0.5)),
            p95: ms(quantile(latencies, 0.95)),
            p99: ms(quantile(latencies, 0.99)),
            max: ms(latencies[latencies.length - 1]!),
            min: ms(latencies[0]!),
          },
    frames: {
      expected,
      received,
      lost: expected - received,
      skipped: sum(clients.map((c) => c.skipped)),
      wrongRows: sum(clients.map((c) => c.wrongRows)),
      disconnects: sum(clients.map((c) => c.disconnects)),
    },
    snapshotEvents: { received: sum(clients.map((c) => c.frames)), sentByServer: total((s) => s.framesSent) },
    commits,
    affectedGroupsPerCommit: affected,
    changedGroupsPerCommit: changed,
    snapshotQueriesPerCommit: round(snapshotQueries / commits, 3),
    snapshotQueriesPerAffectedGroup: round(snapshotQueries / (commits * affected), 3),
    snapshotQueriesPerAffectedGroupPerWakeup: wakeups > 0 ? round(snapshotQueries / (wakeups * affectedPerWakeup), 3) : null,
    unchangedRunsPerCommit: round(total((s) => s.unchangedRuns) / commits, 3),
    wakeupsPerCommit: round(wakeups / commits, 3),
    notificationsPerCommit: round(total((s) => s.notifications) / commits, 3),
    roundTripsPerCommit: round(total((s) => s.databaseCalls) / commits, 2),
    cpuMsPerCommit: round(cpuUs / commits / 1000, 3),
    cpuUsPerDelivery: received > 0 ? round(cpuUs / received, 2) : null,
    serverEventLoopUtilization: round(median(rounds.map((m) => m.server.eventLoopUtilization)), 3),
    databaseCpuMsPerCommit: databaseCpu === null ? null : round(databaseCpu / commits / 1000, 3),
    writesDatabaseCpuMsPerCommit: writesDatabaseCpu === null ? null : round(writesDatabaseCpu / commits / 1000, 3),
    rssBytesPerIdleSubscriber: Math.round(median(perRound.map((r) => r.rss))),
    rssBytesPerIdleSubscriberRegularGc: Math.round(median(perRound.map((r) => r.rssRegular))),
    heapBytesPerIdleSubscriber: Math.round(median(perRound.map((r) => r.heap))),
    memory: {
      rssStartMiB: mib(median(rounds.map((m) => m.memory.start.rss))),
      rssIdleMiB: mib(median(rounds.map((m) => m.memory.idle.lastResort.rss))),
      heapIdleMiB: mib(median(rounds.map((m) => m.memory.idle.lastResort.heapUsed))),
      warmSubscribers: first.warmSubscribers,
      perIdleSubscriber: {
        v8Resident: Object.fromEntries(
          spaces.map((space) => [space, Math.round(median(perRound.map((r) => r.spaces[space] ?? 0)))] as const).filter(([, bytes]) => bytes !== 0),
        ),
        outsideV8Heap: Math.round(median(perRound.map((r) => r.outside))),
      },
    },
    openSubscribersPerSec: Math.round(median(perRound.map((r) => r.open))),
    clientLoopLagMs: {
      p50: Math.max(...clients.map((c) => c.loopDelayMs.p50)),
      p99: Math.max(...clients.map((c) => c.loopDelayMs.p99)),
      max: Math.max(...clients.map((c) => c.loopDelayMs.max)),
    },
    clientEventLoopUtilization: round(Math.max(...clients.map((c) => c.eventLoopUtilization)), 3),
    machineCpuBusy: machine ? round(median(perRound.map((r) => r.busy)), 3) : null,
    interruptCpuShare: perRound.every((r) => r.interrupts !== null) ? round(median(perRound.map((r) => r.interrupts!)), 3) : null,
    // The worst round: one disturbed round is enough to doubt a figure.
    otherProcessesCpuShare: machine ? round(Math.max(...perRound.map((r) => r.other)), 3) : null,
    writerWorstStartLagMs: round(Math.max(...rounds.map((m) => m.writerWorstStartLagMs)), 1),
    writerCommitMs: (() => {
      const commitsUs = Float64Array.from(rounds.flatMap((m) => m.commitRoundTripsUs)).sort();
      return { p50: ms(quantile(commitsUs, 0.5)), p99: ms(quantile(commitsUs, 0.99)), max: ms(commitsUs[commitsUs.length - 1]!) };
    })(),
    drainMs: Math.round(Math.max(...rounds.map((m) => m.drainMs))),
    drained: rounds.every((m) => m.drained),
    rounds: perRound.map((r) => r.figures),
  };
}

export interface PointRatios {
  subscribers: number;
  groups: number;
  rate: number;
  tenants: Point['tenants'];
  shape: Shape;
  processes: number;
  /** fw over bare: 1 means fw costs nothing over the bare fan-out; above 1, fw is slower or bigger. */
  fwOverBare: {
    latencyP50: number | null;
    latencyP99: number | null;
    snapshotQueriesPerCommit: number | null;
    cpuPerCommit: number | null;
    rssPerIdleSubscriber: number | null;
    heapPerIdleSubscriber: number | null;
  };
  /** With BENCH_LIVE_BASELINE: fw over the baseline checkout's fw (1 means no change). */
  fwOverBaseline?: PointRatios['fwOverBare'];
}

export function pointRatios(runs: RunFigures[]): PointRatios[] {
  const out: PointRatios[] = [];
  const over = (fw: RunFigures, other: RunFigures): PointRatios['fwOverBare'] => ({
    latencyP50: ratio(fw.latencyMs?.p50, other.latencyMs?.p50),
    latencyP99: ratio(fw.latencyMs?.p99, other.latencyMs?.p99),
    snapshotQueriesPerCommit: ratio(fw.snapshotQueriesPerCommit, other.snapshotQueriesPerCommit),
    cpuPerCommit: ratio(fw.cpuMsPerCommit, other.cpuMsPerCommit),
    rssPerIdleSubscriber: ratio(fw.rssBytesPerIdleSubscriber, other.rssBytesPerIdleSubscriber),
    heapPerIdleSubscriber: ratio(fw.heapBytesPerIdleSubscriber, other.heapBytesPerIdleSubscriber),
  });
  for (const fw of runs.filter((r) => r.variant === 'fw')) {
    const bare = runs.find((r) => r.variant === 'bare' && samePoint(r, fw));
    if (!bare) continue;
    const baseline = runs.find((r) => r.variant === 'baseline' && samePoint(r, fw));
    out.push({
      subscribers: fw.subscribers,
      groups: fw.groups,
      rate: fw.rate,
      tenants: fw.tenants,
      shape: fw.shape,
      processes: fw.processes,
      fwOverBare: over(fw, bare),
      ...(baseline ? { fwOverBaseline: over(fw, baseline) } : {}),
    });
  }
  return out;
}

export interface Target {
  target: string;
  /** The run(s) it is judged on. */
  on: string;
  measured: unknown;
  limit: unknown;
  /** null: the matrix did not include the point. */
  met: boolean | null;
}

const RSS_LIMIT = 16 * 1024;

/** The issue's latency bound against the bare server at the same point: max(2 × bare p99, bare p99 + 10 ms). */
const relativeP99Limit = (bareP99: number) => round(Math.max(2 * bareP99, bareP99 + 10), 2);

export function targets(runs: RunFigures[]): Target[] {
  const fw = runs.filter((r) => r.variant === 'fw');
  const out: Target[] = [];
  const complete = (r: RunFigures) => r.frames.lost === 0 && r.frames.wrongRows === 0;
  const bareOf = (r: RunFigures) => runs.find((b) => b.variant === 'bare' && samePoint(b, r));
  const at = (subscribers: number, groups: number, rate: number, shape: Shape, tenants?: Point['tenants']) =>
    fw.find((r) => r.subscribers === subscribers && r.groups === groups && r.rate === rate && r.shape === shape && (tenants === undefined || r.tenants === tenants));

  // ---- absolute targets, on fw alone ----

  const oneGroup = at(1000, 1, 10, 'items') ?? fw.find((r) => r.subscribers === 1000 && r.groups === 1 && r.shape === 'items');
  out.push({
    target: '1k subscribers in one group: p50 ≤ 15 ms, p99 ≤ 60 ms (and no lost frame)',
    on: oneGroup ? `fw ${pointKey(oneGroup)}` : 'fw 1000 subscribers / 1 group (not in this run)',
    measured: oneGroup ? { p50Ms: oneGroup.latencyMs?.p50 ?? null, p99Ms: oneGroup.latencyMs?.p99 ?? null, lost: oneGroup.frames.lost } : null,
    limit: { p50Ms: 15, p99Ms: 60 },
    met: oneGroup ? complete(oneGroup) && oneGroup.latencyMs !== null && oneGroup.latencyMs.p50 <= 15 && oneGroup.latencyMs.p99 <= 60 : null,
  });

  const tenK = fw.filter((r) => r.subscribers === 10_000 && r.groups === 100 && r.rate === 10 && r.shape === 'items');
  if (tenK.length === 0) {
    out.push({ target: '10k subscribers over 100 groups at 10 commits/s: p99 ≤ 250 ms', on: 'fw 10000x100x10:items (not in this run)', measured: null, limit: { p99Ms: 250 }, met: null });
  }
  for (const r of tenK) {
    out.push({
      target: '10k subscribers over 100 groups at 10 commits/s: p99 ≤ 250 ms (and no lost frame)',
      on: `fw ${pointKey(r)}`,
      measured: { p99Ms: r.latencyMs?.p99 ?? null, lost: r.frames.lost },
      limit: { p99Ms: 250 },
      met: complete(r) && r.latencyMs !== null && r.latencyMs.p99 <= 250,
    });
  }

  // ---- fw against the bare server at the same point, in the same run (issue #16) ----

  const relative = (
    target: string,
    r: RunFigures | undefined,
    missing: string,
    judge: (fwLatency: NonNullable<RunFigures['latencyMs']>, bareLatency: NonNullable<RunFigures['latencyMs']>) => { limit: unknown; met: boolean },
  ) => {
    const bare = r ? bareOf(r) : undefined;
    if (!r || !bare || r.latencyMs === null || bare.latencyMs === null) {
      out.push({ target, on: r ? `fw and bare ${pointKey(r)} (bare not in this run)` : `fw and bare ${missing} (not in this run)`, measured: null, limit: null, met: null });
      return;
    }
    const judged = judge(r.latencyMs, bare.latencyMs);
    out.push({
      target,
      on: `fw and bare ${pointKey(r)}, same run`,
      measured: {
        fw: { p50Ms: r.latencyMs.p50, p99Ms: r.latencyMs.p99, lost: r.frames.lost, wrongRows: r.frames.wrongRows },
        bare: { p50Ms: bare.latencyMs.p50, p99Ms: bare.latencyMs.p99 },
        fwOverBare: { p50: ratio(r.latencyMs.p50, bare.latencyMs.p50), p99: ratio(r.latencyMs.p99, bare.latencyMs.p99) },
      },
      limit: judged.limit,
      met: complete(r) && judged.met,
    });
  };

  relative('1k subscribers in one group: fw p50 ≤ 1.05 × bare p50 and fw p99 ≤ 1.2 × bare p99 (and no lost frame)', oneGroup, '1000x1x10:items', (f, b) => {
    const limit = { p50Ms: round(1.05 * b.p50, 2), p99Ms: round(1.2 * b.p99, 2) };
    return { limit, met: f.p50 <= limit.p50Ms && f.p99 <= limit.p99Ms };
  });
  const p99AgainstBare = (f: NonNullable<RunFigures['latencyMs']>, b: NonNullable<RunFigures['latencyMs']>) => {
    const limit = { p99Ms: relativeP99Limit(b.p99) };
    return { limit, met: f.p99 <= limit.p99Ms };
  };
  relative(
    '10k subscribers over 100 groups in one tenant: fw p99 ≤ max(2 × bare p99, bare p99 + 10 ms) (and no lost frame)',
    at(10_000, 100, 10, 'items', 'one'),
    '10000x100x10:items/one',
    p99AgainstBare,
  );
  const fiveK = at(5000, 1000, 10, 'items', 'one');
  relative('5k subscribers over 1000 groups in one tenant: fw p99 ≤ max(2 × bare p99, bare p99 + 10 ms) (and no lost frame)', fiveK, '5000x1000x10:items/one', p99AgainstBare);
  out.push({
    target: '5k subscribers over 1000 groups in one tenant: ≤ 1.5 snapshot queries per commit (a commit changes one group)',
    on: fiveK ? `fw ${pointKey(fiveK)}` : 'fw 5000x1000x10:items/one (not in this run)',
    measured: fiveK ? { snapshotQueriesPerCommit: fiveK.snapshotQueriesPerCommit, unchangedRunsPerCommit: fiveK.unchangedRunsPerCommit } : null,
    limit: 1.5,
    met: fiveK ? fiveK.snapshotQueriesPerCommit <= 1.5 : null,
  });

  const shaped = fw.filter((r) => r.shape !== 'items');
  out.push({
    target: 'join and bulk points: no lost update and no wrong row',
    on: 'every fw run of a join or bulkK point (latencies reported beside the bare server\'s)',
    measured: shaped.length
      ? Object.fromEntries(
          shaped.map((r) => {
            const bare = bareOf(r);
            return [
              pointKey(r),
              {
                lost: r.frames.lost,
                wrongRows: r.frames.wrongRows,
                skipped: r.frames.skipped,
                p50Ms: r.latencyMs?.p50 ?? null,
                p99Ms: r.latencyMs?.p99 ?? null,
                bareP99Ms: bare?.latencyMs?.p99 ?? null,
                snapshotQueriesPerCommit: r.snapshotQueriesPerCommit,
              },
            ];
          }),
        )
      : null,
    limit: { lost: 0, wrongRows: 0 },
    met: shaped.length > 0 ? shaped.every(complete) : null,
  });
  out.push({
    target: 'every run: no lost update and no wrong row',
    on: 'every run of both variants',
    measured: Object.fromEntries(runs.map((r) => [`${r.variant} ${pointKey(r)}`, { lost: r.frames.lost, wrongRows: r.frames.wrongRows }])),
    limit: { lost: 0, wrongRows: 0 },
    met: runs.length > 0 ? runs.every(complete) : null,
  });

  // ---- snapshot queries and memory ----

  const perWakeup = fw.map((r) => r.snapshotQueriesPerAffectedGroupPerWakeup ?? Infinity);
  out.push({
    target: 'exactly one snapshot query per affected group per wakeup (no duplicate runs; folding allowed)',
    on: 'every fw run: snapshot queries / ((log reads + notices) × groups each wakes)',
    measured: Object.fromEntries(fw.map((r) => [pointKey(r), r.snapshotQueriesPerAffectedGroupPerWakeup])),
    limit: 1,
    met: fw.length > 0 ? perWakeup.every((v) => v <= 1) : null,
  });
  out.push({
    target: 'one snapshot query per changed group (the bare server\'s figure)',
    on: 'every fw run: snapshot queries per commit ≤ the groups a commit changes (1, or K for bulkK)',
    measured: Object.fromEntries(fw.map((r) => [pointKey(r), { snapshotQueriesPerCommit: r.snapshotQueriesPerCommit, changedGroupsPerCommit: r.changedGroupsPerCommit }])),
    limit: 'changedGroupsPerCommit',
    met: fw.length > 0 ? fw.every((r) => r.snapshotQueriesPerCommit <= r.changedGroupsPerCommit) : null,
  });

  // ---- the cluster: several processes on one database rerun each group once between them ----

  const clusterRuns = fw.filter((r) => r.processes > 1);
  const alone = (r: RunFigures) => fw.find((one) => one.processes === 1 && samePoint(one, { ...r, processes: 1 }));
  out.push({
    target: 'cluster: commit-to-client p99 within 1.3× of one process at the same point (and no lost frame)',
    on: clusterRuns.length > 0 ? 'every fw cluster run (@P) and the same point with one process' : 'fw at a cluster point @P and the same point alone (not in this run)',
    measured: Object.fromEntries(clusterRuns.map((r) => [pointKey(r), { p99Ms: r.latencyMs?.p99 ?? null, oneProcessP99Ms: alone(r)?.latencyMs?.p99 ?? null, lost: r.frames.lost }])),
    limit: { p99OverOneProcess: 1.3 },
    met:
      clusterRuns.length > 0 && clusterRuns.every((r) => alone(r))
        ? clusterRuns.every((r) => complete(r) && r.latencyMs !== null && r.latencyMs.p99 <= 1.3 * alone(r)!.latencyMs!.p99)
        : null,
  });

  const memoryRuns = fw.filter((r) => r.subscribers >= 1000);
  out.push({
    target: '≤ 16 KiB RSS per idle subscriber',
    on:
      'every fw run with ≥ 1000 subscribers: (RSS with N idle − RSS with the first few) / the rest, after a last-resort GC (judged), ' +
      'and after a regular full GC (includes the young generation V8 grew while the streams opened)',
    measured: Object.fromEntries(
      memoryRuns.map((r) => [pointKey(r), { retained: r.rssBytesPerIdleSubscriber, afterRegularGc: r.rssBytesPerIdleSubscriberRegularGc }]),
    ),
    limit: RSS_LIMIT,
    met: memoryRuns.length > 0 ? memoryRuns.every((r) => r.rssBytesPerIdleSubscriber <= RSS_LIMIT) : null,
  });
  return out;
}

/** Plain-language readings derived from the figures. */
export function describe(runs: RunFigures[]): string[] {
  const notes: string[] = [];
  for (const r of runs) {
    const where = `${r.variant} ${pointKey(r)}`;
    if (r.frames.lost > 0) {
      notes.push(`LOST UPDATES: ${where}: ${r.frames.lost} of ${r.frames.expected} deliveries never arrived (${r.drained ? '' : 'drain timed out; '}${r.frames.skipped} skipped by a later snapshot, ${r.frames.disconnects} streams dropped).`);
    } else if (r.frames.skipped > 0) {
      notes.push(`${where}: ${r.frames.skipped} writes were skipped by some subscriber (a later snapshot carried more than the snapshot's rows); none was lost for good.`);
    }
    if (r.frames.wrongRows > 0) notes.push(`WRONG DATA: ${where}: ${r.frames.wrongRows} rows of another group (or joined to another group's row) reached a subscriber.`);
    if (r.latencyMs !== null && r.latencyMs.min < -1) {
      notes.push(`${where}: some frames arrived ${-r.latencyMs.min} ms before the writer saw its COMMIT return (writer commit max ${r.writerCommitMs.max} ms): the writer waited for a core, so some latencies read short.`);
    }
    if (r.clientLoopLagMs.p99 > 20) {
      notes.push(`${where}: the subscriber process's event loop lagged (p99 ${r.clientLoopLagMs.p99} ms, max ${r.clientLoopLagMs.max} ms): arrival stamps can be late by that much, so latencies are an upper bound.`);
    }
    if (r.variant === 'fw' && r.snapshotQueriesPerCommit > 1.5 * r.changedGroupsPerCommit) {
      const changed = r.changedGroupsPerCommit === 1 ? 'one group' : `${r.changedGroupsPerCommit} groups`;
      notes.push(
        `${where}: one commit changes ${changed} but fw ran ${r.snapshotQueriesPerCommit} snapshot queries per commit, ${r.unchangedRunsPerCommit} of them with an unchanged result ` +
          `(of the ${r.groups} groups${r.tenants === 'one' ? ', all in the written tenant' : ''}).`,
      );
    }
    if (r.otherProcessesCpuShare !== null && r.otherProcessesCpuShare > 0.05) {
      notes.push(`${where}: the machine was not quiet: other processes used ${Math.round(r.otherProcessesCpuShare * 100)}% of all cores during the measurement; rerun on an idle machine.`);
    }
    if (r.machineCpuBusy !== null && r.machineCpuBusy > 0.9) notes.push(`${where}: the machine was saturated (${Math.round(r.machineCpuBusy * 100)}% of all cores busy); latency includes queueing for CPU.`);
  }
  return notes;
}

function samePoint(a: RunFigures, b: RunFigures): boolean {
  return a.subscribers === b.subscribers && a.groups === b.groups && a.rate === b.rate && a.tenants === b.tenants && a.shape === b.shape && a.processes === b.processes;
}

/** A run's point in the BENCH_LIVE_POINTS syntax, with its tenant layout: `5000x1000x10:join/one`, `3000x1000x10:bulk10@3/one`. */
export function pointKey(r: Pick<RunFigures, 'subscribers' | 'groups' | 'rate' | 'shape' | 'tenants' | 'processes'>): string {
  return `${r.subscribers}x${r.groups}x${r.rate}:${r.shape}${r.processes > 1 ? `@${r.processes}` : ''}${r.groups > 1 ? `/${r.tenants}` : ''}`;
}

function concat(arrays: Float64Array[]): Float64Array {
  const out = new Float64Array(sum(arrays.map((a) => a.length)));
  let offset = 0;
  for (const a of arrays) {
    out.set(a, offset);
    offset += a.length;
  }
  return out;
}

/** Nearest-rank quantile of sorted values. */
function quantile(sorted: Float64Array, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

const resident = (sample: { spaces: Record<string, number> }) => sum(Object.values(sample.spaces));
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const ms = (us: number) => round(us / 1000, 2);
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const mib = (bytes: number) => round(bytes / 1024 / 1024, 1);
const ratio = (a: number | undefined | null, b: number | undefined | null) => (a == null || b == null || b === 0 ? null : round(a / b, 2));

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
