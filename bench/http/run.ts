/**
 * bench/http: fw's HTTP runtime (a) against a hand-written node:http + Kysely server with the same
 * guarantees (b) and a bare one-statement server (c), on PostgreSQL and on PGlite, under the same
 * closed-loop load. Prints one JSON document on stdout; progress goes to stderr. See README.md.
 *
 *   npm run -s bench:http > http.json
 *   BENCH_DURATION=3 BENCH_ROUNDS=1 BENCH_DATABASES=pglite npm run -s bench:http
 */
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fwVersion } from '../../runtime/core/version.ts';
import { LIST_LIMIT, SEED_NOTES_PER_TENANT, STATEMENT_TIMEOUT_MS } from './app.ts';
import { checkServers } from './checks.ts';
import { type BenchOptions, type DatabaseKind, entries, FIRST_RUN_EXTRA_WARMUP_SEC, resolveBenchOptions, variantsOf } from './config.ts';
import { type Measurement, measure } from './measure.ts';
import { type BenchPostgres, createBenchPostgres } from './postgres.ts';
import { describeFigures, describeQuietness, type EntryFigures, type Measurements, otherShare, summarize } from './report.ts';
import { type ServerHandle, startServer } from './server-handle.ts';

const TARGET_FW_VS_HAND_WRITTEN = 0.85;

const cleanups = new Set<() => Promise<void>>();
const log = (line: string) => process.stderr.write(`bench/http: ${line}\n`);

async function main(): Promise<void> {
  const options = resolveBenchOptions();
  const started = performance.now();
  const perRun = options.warmupSec + options.durationSec;
  const variants = variantsOf(options);
  const planned = options.databases.length * entries.length * variants.length * (options.rounds * perRun + FIRST_RUN_EXTRA_WARMUP_SEC);
  log(`${options.databases.join(' + ')}, ${options.connections} connections, ${options.rounds} round(s) of ${options.warmupSec} s warm-up + ${options.durationSec} s; about ${Math.ceil(planned / 60)} min of load.`);

  const results: Partial<Record<DatabaseKind, Record<string, EntryFigures>>> = {};
  const databases: Record<string, unknown> = {};
  const notes: string[] = [];
  for (const database of options.databases) {
    const { figures, info } = await benchDatabase(database, options);
    results[database] = figures;
    databases[database] = info;
    for (const entry of entries) notes.push(...describeFigures(database, entry, figures[entry]!), ...describeQuietness(database, entry, figures[entry]!));
  }

  const target = results.postgres
    ? {
        postgres: Object.fromEntries(
          entries.map((entry) => {
            const ratio = results.postgres![entry]!.ratios.fwVsHandWritten;
            return [entry, { fwVsHandWritten: ratio, atLeast: TARGET_FW_VS_HAND_WRITTEN, met: ratio >= TARGET_FW_VS_HAND_WRITTEN }];
          }),
        ),
      }
    : null;

  const document = {
    bench: 'http',
    fw: fwVersion,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: { count: cpus().length, model: cpus()[0]?.model ?? 'unknown' },
    config: {
      connections: options.connections,
      durationSec: options.durationSec,
      warmupSec: options.warmupSec,
      firstRunExtraWarmupSec: FIRST_RUN_EXTRA_WARMUP_SEC,
      rounds: options.rounds,
      poolSize: options.poolSize,
      ...(options.baselineDir ? { baseline: options.baselineDir } : {}),
      pipelining: 1,
      listLimit: LIST_LIMIT,
      seedNotesPerTenant: SEED_NOTES_PER_TENANT,
      statementTimeoutMs: STATEMENT_TIMEOUT_MS,
      loadGenerator: 'autocannon 8, in the orchestrating process; each server in its own process',
      order: 'per database: all listNotes rounds, then all createNote rounds; in each round every variant runs back to back, starting variant rotated',
    },
    databases,
    results,
    target,
    notes,
    elapsedSec: Math.round((performance.now() - started) / 1000),
  };
  process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
}

async function benchDatabase(database: DatabaseKind, options: BenchOptions) {
  const variants = variantsOf(options);
  let postgres: BenchPostgres | undefined;
  // The baseline's database, prepared by its own code (its identity functions and policies may differ).
  let baselinePostgres: BenchPostgres | undefined;
  const servers: ServerHandle[] = [];
  const cleanup = async () => {
    await Promise.all(servers.map((server) => server.close().catch(() => undefined)));
    for (const db of [postgres, baselinePostgres]) if (db) await db.drop().catch((error: Error) => log(`could not drop ${db.name}: ${error.message}`));
  };
  cleanups.add(cleanup);
  try {
    if (database === 'postgres') {
      postgres = await createBenchPostgres(options.postgresUrl);
      log(`postgres: created, migrated and seeded database ${postgres.name}`);
      if (options.baselineDir) {
        const baseline = (await import(`${options.baselineDir}/bench/http/postgres.ts`)) as { createBenchPostgres: typeof createBenchPostgres };
        baselinePostgres = await baseline.createBenchPostgres(options.postgresUrl);
        log(`postgres: created, migrated and seeded database ${baselinePostgres.name} for the baseline (${options.baselineDir})`);
      }
    }
    for (const variant of variants) {
      // One at a time: PGlite servers each initialise and migrate an in-memory database.
      const db = variant === 'baseline' ? baselinePostgres : postgres;
      servers.push(
        await startServer({ variant, database, ...(db ? { url: db.url } : {}), poolSize: options.poolSize, ...(variant === 'baseline' ? { baselineDir: options.baselineDir! } : {}) }),
      );
    }
    await checkServers(servers);
    log(`${database}: all variants answer correctly`);

    const measurements = Object.fromEntries(
      entries.map((entry) => [entry, Object.fromEntries(variants.map((variant) => [variant, []]))]),
    ) as unknown as Measurements;
    for (const entry of entries) {
      for (let round = 0; round < options.rounds; round++) {
        // Rotate who goes first so drift (heat, autovacuum, table growth) does not always favour one variant.
        const order = variants.map((_, i) => servers[(i + round) % servers.length]!);
        for (const server of order) {
          const measureOptions = {
            connections: options.connections,
            durationSec: options.durationSec,
            warmupSec: options.warmupSec + (round === 0 ? FIRST_RUN_EXTRA_WARMUP_SEC : 0),
            databaseName: (server.spec.variant === 'baseline' ? baselinePostgres : postgres)?.name ?? null,
          };
          const m = await measure(server, entry, measureOptions);
          log(`${database} ${entry} round ${round + 1}/${options.rounds} ${server.spec.variant}: ${describeRun(m)}`);
          measurements[entry][server.spec.variant]!.push(m);
        }
      }
    }
    const info = postgres ? { kind: 'postgres', serverVersion: postgres.serverVersion, database: postgres.name } : { kind: 'pglite', dataDir: 'memory://' };
    return { figures: summarize(measurements), info };
  } finally {
    await cleanup();
    cleanups.delete(cleanup);
  }
}

function describeRun(m: Measurement): string {
  const other = otherShare(m) ?? 0;
  return (
    `${Math.round(m.load.reqPerSec)} req/s, p99 ${m.load.p99Ms} ms, ${(m.server.databaseCalls / m.server.requests).toFixed(2)} db calls/req, ` +
    `server CPU ${Math.round(m.server.cpuUs / m.server.requests)} µs/req` +
    (other > 0.05 ? ` (other processes used ${Math.round(other * 100)}% of the CPU)` : '')
  );
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping servers and dropping the benchmark database`);
    Promise.all([...cleanups].map((c) => c())).finally(() => process.exit(130));
  });
}

main().catch((error: unknown) => {
  log(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
