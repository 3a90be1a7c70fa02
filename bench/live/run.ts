/**
 * bench/live: fw's live queries (the hub `createRuntime` starts, behind its handler) against a bare
 * LISTEN → SSE fan-out server, on PostgreSQL: N subscribers over G groups, W commits per second.
 * Prints one JSON document on stdout; progress goes to stderr. See README.md.
 *
 *   npm run -s bench:live > live.json
 *   BENCH_LIVE_QUICK=1 npm run -s bench:live
 */
import { cpus, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fwVersion } from '../../runtime/core/version.ts';
import { SNAPSHOT_ROWS } from './app.ts';
import { resolveBenchOptions } from './config.ts';
import { describePoint, measureRun, type RunMeasurement } from './measure.ts';
import { type BenchPostgres, createBenchPostgres } from './postgres.ts';
import { describe, pointRatios, type RunFigures, runFigures, targets } from './report.ts';

const log = (line: string) => process.stderr.write(`bench/live: ${line}\n`);
let postgres: BenchPostgres | undefined;
let baselinePostgres: BenchPostgres | undefined;

async function main(): Promise<void> {
  const options = resolveBenchOptions();
  const started = performance.now();
  log(
    `${options.rounds} round(s) of ${options.points.length} point(s) × ${options.variants.join(' + ')}, ${options.warmupSec} s warm-up + ${options.durationSec} s of writes each` +
      `${options.quick ? ' (quick mode)' : ''}.`,
  );
  postgres = await createBenchPostgres(options.postgresUrl);
  postgresVersion = postgres.serverVersion;
  log(`postgres ${postgres.serverVersion}: created and migrated database ${postgres.name}`);
  if (options.baselineDir) {
    // A database of its own, made and migrated by the baseline's own code: two versions of fw's
    // functions and triggers never share one.
    const { createBenchPostgres: createBaselinePostgres } = (await import(`${options.baselineDir}/bench/live/postgres.ts`)) as { createBenchPostgres: typeof createBenchPostgres };
    baselinePostgres = await createBaselinePostgres(options.postgresUrl);
    log(`baseline ${options.baselineDir}: created and migrated database ${baselinePostgres.name}`);
  }

  const measurements = new Map<string, RunMeasurement[]>();
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (const [index, point] of options.points.entries()) {
        // Alternate who goes first, so drift (table growth, autovacuum, heat) does not always favour one variant.
        const order = (index + round) % 2 === 0 ? options.variants : [...options.variants].reverse();
        for (const variant of order) {
          const database = variant === 'baseline' ? baselinePostgres! : postgres;
          const measurement = await measureRun(variant, point, { url: database.url, databaseName: database.name, options, log });
          const key = JSON.stringify([point, variant]);
          measurements.set(key, [...(measurements.get(key) ?? []), measurement]);
          const figures = runFigures([measurement]);
          log(`round ${round + 1}/${options.rounds} ${variant} ${describePoint(point)}: ${summary(figures)}`);
          if (figures.frames.lost > 0) log(`!!! ${variant}: ${figures.frames.lost} of ${figures.frames.expected} deliveries LOST`);
        }
      }
    }
  } finally {
    await postgres.drop().catch((error: Error) => log(`could not drop ${postgres!.name}: ${error.message}`));
    postgres = undefined;
    await baselinePostgres?.drop().catch((error: Error) => log(`could not drop ${baselinePostgres!.name}: ${error.message}`));
    baselinePostgres = undefined;
  }
  const runs: RunFigures[] = options.points.flatMap((point) =>
    options.variants.map((variant) => runFigures(measurements.get(JSON.stringify([point, variant]))!)),
  );

  const document = {
    bench: 'live',
    fw: fwVersion,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: { count: cpus().length, model: cpus()[0]?.model ?? 'unknown' },
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    postgres: { serverVersion: postgresVersion },
    config: {
      points: options.points,
      variants: options.variants,
      rounds: options.rounds,
      durationSec: options.durationSec,
      warmupSec: options.warmupSec,
      drainSec: options.drainSec,
      clientProcesses: options.clientProcesses,
      openConcurrency: options.openConcurrency,
      poolSize: options.poolSize,
      snapshotRows: SNAPSHOT_ROWS,
      quick: options.quick,
      layout:
        'each server (fw or bare) in its own process; subscribers in BENCH_LIVE_CLIENT_PROCESSES separate processes; the writer (pg, open loop) in the orchestrating process',
      latency: 'frame arrival (socket read, CLOCK_MONOTONIC) minus the moment the writer\'s COMMIT returned, per subscriber and commit',
    },
    runs,
    ratios: pointRatios(runs),
    targets: targets(runs),
    notes: describe(runs),
    elapsedSec: Math.round((performance.now() - started) / 1000),
  };
  process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  if (runs.some((r) => r.frames.lost > 0 || r.frames.wrongRows > 0)) {
    log('FAILED: some updates were lost or wrong (see "notes").');
    process.exitCode = 1;
  }
}

let postgresVersion = 'unknown';

function summary(f: RunFigures): string {
  const l = f.latencyMs;
  return (
    `latency p50 ${l?.p50 ?? '–'} / p99 ${l?.p99 ?? '–'} / max ${l?.max ?? '–'} ms; ` +
    `${f.frames.received}/${f.frames.expected} deliveries; ${f.snapshotQueriesPerCommit} snapshot queries/commit; ` +
    `${f.cpuMsPerCommit} ms CPU/commit; ${f.rssBytesPerIdleSubscriber} B RSS/idle subscriber; client loop lag p99 ${f.clientLoopLagMs.p99} ms`
  );
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: dropping the benchmark database`);
    Promise.allSettled([postgres?.drop(), baselinePostgres?.drop()]).finally(() => process.exit(130));
  });
}

main().catch((error: unknown) => {
  log(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
