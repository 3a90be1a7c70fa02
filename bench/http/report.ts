/** Turns the measurements into the figures of the JSON document: per variant, ratios, and notes. */
import type { DatabaseKind, EntryName, VariantName } from './config.ts';
import type { Measurement } from './measure.ts';

export interface VariantFigures {
  /** Median over rounds of responses per second. */
  reqPerSec: number;
  /** Median over rounds of the 50th and 99th latency percentiles, in ms. */
  p50Ms: number;
  p99Ms: number;
  /** Database calls per request: network round trips on PostgreSQL, engine calls on PGlite. */
  roundTrips: number;
  /** Statements per request sent to PostgreSQL (null on PGlite, whose batches are not counted by statement). */
  statements: number | null;
  /** CPU time of the server process per request, in µs (HTTP parsing, handler, driver, GC). */
  serverCpuUsPerReq: number;
  /** CPU time of the PostgreSQL backends per request, in µs (null on PGlite: it runs inside the server process). */
  databaseCpuUsPerReq: number | null;
  /** CPU time of the load generator per request, in µs. */
  loadGeneratorCpuUsPerReq: number;
  /** Share of time the server's event loop was busy. */
  serverEventLoopUtilization: number;
  /** Share of all cores busy during the run. */
  machineCpuBusy: number | null;
  /**
   * Share of all cores used by processes that are not part of this benchmark (machine busy minus
   * server, benchmark database backends and load generator). Above ~0.05 the machine was not quiet.
   */
  otherProcessesCpuShare: number | null;
  rounds: Array<{ reqPerSec: number; p99Ms: number }>;
}

export interface EntryFigures {
  fw: VariantFigures;
  handWritten: VariantFigures;
  bare: VariantFigures;
  /** With BENCH_BASELINE: another checkout's (a), and (a) over it. */
  baseline?: VariantFigures;
  ratios: {
    /** Throughput of (a) over (b) and over (c): 1 means no cost. */
    fwVsHandWritten: number;
    fwVsBare: number;
    /** p99 latency of (a) over (b) and over (c): 1 means no cost, above 1 slower. */
    p99FwVsHandWritten: number;
    p99FwVsBare: number;
    perRound: { fwVsHandWritten: number[]; fwVsBare: number[]; fwVsBaseline?: number[] };
    /** Throughput of (a) over the baseline's (a): above 1, this checkout is faster. */
    fwVsBaseline?: number;
    /** The baseline's throughput over bare: what fwVsBare was before the change. */
    baselineVsBare?: number;
  };
  /** Extra server CPU per request of (a), in µs. */
  fwServerCpuUsPerReqOver: { handWritten: number; bare: number };
}

export type Measurements = Record<EntryName, Partial<Record<VariantName, Measurement[]>> & Record<'fw' | 'handWritten' | 'bare', Measurement[]>>;

export function summarize(measurements: Measurements): Record<EntryName, EntryFigures> {
  const out = {} as Record<EntryName, EntryFigures>;
  for (const entry of Object.keys(measurements) as EntryName[]) {
    const runs = measurements[entry];
    const fw = figures(runs.fw);
    const handWritten = figures(runs.handWritten);
    const bare = figures(runs.bare);
    const baseline = runs.baseline?.length ? figures(runs.baseline) : undefined;
    out[entry] = {
      fw,
      handWritten,
      bare,
      ...(baseline ? { baseline } : {}),
      ratios: {
        fwVsHandWritten: round(fw.reqPerSec / handWritten.reqPerSec, 3),
        fwVsBare: round(fw.reqPerSec / bare.reqPerSec, 3),
        p99FwVsHandWritten: round(fw.p99Ms / handWritten.p99Ms, 3),
        p99FwVsBare: round(fw.p99Ms / bare.p99Ms, 3),
        // Each round measures the variants back to back, so per-round ratios show the noise.
        perRound: {
          fwVsHandWritten: fw.rounds.map((r, i) => round(r.reqPerSec / handWritten.rounds[i]!.reqPerSec, 3)),
          fwVsBare: fw.rounds.map((r, i) => round(r.reqPerSec / bare.rounds[i]!.reqPerSec, 3)),
          ...(baseline ? { fwVsBaseline: fw.rounds.map((r, i) => round(r.reqPerSec / baseline.rounds[i]!.reqPerSec, 3)) } : {}),
        },
        ...(baseline ? { fwVsBaseline: round(fw.reqPerSec / baseline.reqPerSec, 3), baselineVsBare: round(baseline.reqPerSec / bare.reqPerSec, 3) } : {}),
      },
      fwServerCpuUsPerReqOver: {
        handWritten: round(fw.serverCpuUsPerReq - handWritten.serverCpuUsPerReq, 1),
        bare: round(fw.serverCpuUsPerReq - bare.serverCpuUsPerReq, 1),
      },
    };
  }
  return out;
}

function figures(runs: Measurement[]): VariantFigures {
  const sum = (pick: (m: Measurement) => number) => runs.reduce((total, m) => total + pick(m), 0);
  const requests = sum((m) => m.server.requests);
  const databaseCpu = runs.every((m) => m.cpu.databaseCpuUs !== null) ? sum((m) => m.cpu.databaseCpuUs!) : null;
  const withMachine = runs.every((m) => m.cpu.machine !== null);
  const busy = withMachine ? median(runs.map((m) => m.cpu.machine!.busyUs / m.cpu.machine!.capacityUs)) : null;
  // The worst run is reported: one disturbed run is enough to doubt a ratio.
  const other = withMachine ? Math.max(...runs.map((m) => otherShare(m)!)) : null;
  return {
    reqPerSec: round(median(runs.map((m) => m.load.reqPerSec)), 0),
    p50Ms: round(median(runs.map((m) => m.load.p50Ms)), 2),
    p99Ms: round(median(runs.map((m) => m.load.p99Ms)), 2),
    roundTrips: round(sum((m) => m.server.databaseCalls) / requests, 2),
    statements: runs.every((m) => m.server.databaseStatements > 0) ? round(sum((m) => m.server.databaseStatements) / requests, 2) : null,
    serverCpuUsPerReq: round(sum((m) => m.server.cpuUs) / requests, 1),
    databaseCpuUsPerReq: databaseCpu === null ? null : round(databaseCpu / requests, 1),
    loadGeneratorCpuUsPerReq: round(sum((m) => m.loadGeneratorCpuUs) / sum((m) => m.load.requests), 1),
    serverEventLoopUtilization: round(median(runs.map((m) => m.server.eventLoopUtilization)), 3),
    machineCpuBusy: busy === null ? null : round(busy, 3),
    otherProcessesCpuShare: other === null ? null : round(Math.max(0, other), 3),
    rounds: runs.map((m) => ({ reqPerSec: round(m.load.reqPerSec, 0), p99Ms: round(m.load.p99Ms, 2) })),
  };
}

/** Plain-language readings of the figures, derived from them (no hand-written claims). */
export function describeFigures(database: DatabaseKind, entry: EntryName, f: EntryFigures): string[] {
  const v = (name: 'fw' | 'handWritten' | 'bare') => f[name];
  const trips = `${v('fw').roundTrips} / ${v('handWritten').roundTrips} / ${v('bare').roundTrips}`;
  const cpu = `${v('fw').serverCpuUsPerReq} / ${v('handWritten').serverCpuUsPerReq} / ${v('bare').serverCpuUsPerReq}`;
  const notes = [
    `${database} ${entry}: fw/hand-written/bare = ${v('fw').reqPerSec} / ${v('handWritten').reqPerSec} / ${v('bare').reqPerSec} req/s, ` +
      `p99 ${v('fw').p99Ms} / ${v('handWritten').p99Ms} / ${v('bare').p99Ms} ms; a/b ${f.ratios.fwVsHandWritten}, a/c ${f.ratios.fwVsBare}.`,
    `${database} ${entry}: database ${database === 'postgres' ? 'round trips' : 'engine calls'} per request ${trips}` +
      (v('fw').statements === null ? '; ' : `, statements ${v('fw').statements} / ${v('handWritten').statements} / ${v('bare').statements}; `) +
      `server CPU per request ${cpu} µs (fw − hand-written ${signed(f.fwServerCpuUsPerReqOver.handWritten)} µs, fw − bare ${signed(f.fwServerCpuUsPerReqOver.bare)} µs).`,
  ];
  const db = [v('fw').databaseCpuUsPerReq, v('handWritten').databaseCpuUsPerReq, v('bare').databaseCpuUsPerReq];
  if (db.every((x) => x !== null)) {
    notes.push(`${database} ${entry}: PostgreSQL backend CPU per request ${db.join(' / ')} µs; machine busy ${v('fw').machineCpuBusy} / ${v('handWritten').machineCpuBusy} / ${v('bare').machineCpuBusy}.`);
  }
  const baseline = f.baseline;
  if (baseline) {
    notes.push(
      `${database} ${entry}: against the baseline checkout: ${v('fw').reqPerSec} / ${baseline.reqPerSec} req/s (×${f.ratios.fwVsBaseline}; fw/bare ${f.ratios.fwVsBare}, baseline/bare ${f.ratios.baselineVsBare}), ` +
        `p99 ${v('fw').p99Ms} / ${baseline.p99Ms} ms, round trips ${v('fw').roundTrips} / ${baseline.roundTrips}, server CPU ${v('fw').serverCpuUsPerReq} / ${baseline.serverCpuUsPerReq} µs` +
        (baseline.databaseCpuUsPerReq !== null ? `, database CPU ${v('fw').databaseCpuUsPerReq} / ${baseline.databaseCpuUsPerReq} µs.` : '.'),
    );
  }
  return notes;
}

/** Share of all cores that processes outside the benchmark used during one run, or null without /proc. */
export function otherShare(m: Measurement): number | null {
  if (!m.cpu.machine) return null;
  const ours = m.server.cpuUs + (m.cpu.databaseCpuUs ?? 0) + m.loadGeneratorCpuUs;
  return (m.cpu.machine.busyUs - ours) / m.cpu.machine.capacityUs;
}

/** Says so when other processes competed for the CPU: then throughput ratios are noisy, CPU per request less so. */
export function describeQuietness(database: DatabaseKind, entry: EntryName, f: EntryFigures): string[] {
  const worst = Math.max(...(['fw', 'handWritten', 'bare'] as const).map((v) => f[v].otherProcessesCpuShare ?? 0));
  if (worst <= 0.05) return [];
  return [
    `${database} ${entry}: the machine was not quiet: in some run other processes used ${Math.round(worst * 100)}% of all cores. ` +
      'Throughput ratios are then less reliable than the CPU-per-request figures; rerun on an idle machine.',
  ];
}

const signed = (value: number) => (value > 0 ? `+${value}` : String(value));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
