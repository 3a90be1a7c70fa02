/** The benchmark's knobs, all from the environment so `npm run bench:http` needs no flags. */

export type DatabaseKind = 'postgres' | 'pglite';
import { existsSync } from 'node:fs';
import path from 'node:path';

export type VariantName = 'fw' | 'handWritten' | 'bare' | 'baseline';
export type EntryName = 'listNotes' | 'createNote';

/** The variants of a run: (a), (b), (c), and with BENCH_BASELINE the (a) of another checkout. */
export function variantsOf(options: Pick<BenchOptions, 'baselineDir'>): VariantName[] {
  return ['fw', 'handWritten', 'bare', ...(options.baselineDir ? (['baseline'] as const) : [])];
}
export const entries: readonly EntryName[] = ['listNotes', 'createNote'];

/** Extra warm-up of the first run of each server and entry, so the JIT and the pool start warm. */
export const FIRST_RUN_EXTRA_WARMUP_SEC = 2;

export interface BenchOptions {
  /** Measured seconds per run (BENCH_DURATION, default 5). */
  durationSec: number;
  /** Unmeasured seconds before each run, same load (BENCH_WARMUP, default 1; the first run of each server and entry gets 2 s more). */
  warmupSec: number;
  /** Concurrent HTTP connections of the load generator (BENCH_CONNECTIONS, default 32). */
  connections: number;
  /** How often every variant is measured, interleaved; figures are medians (BENCH_ROUNDS, default 4). */
  rounds: number;
  /** Which databases to run, in order (BENCH_DATABASES, default `postgres,pglite`). */
  databases: DatabaseKind[];
  /** Server of the PostgreSQL runs; a fresh database is created on it and dropped afterwards. */
  postgresUrl: string;
  /** Connections per server process on PostgreSQL, equal for every variant (BENCH_POOL_SIZE, default 10, fw's default). */
  poolSize: number;
  /**
   * Another checkout of fw (BENCH_BASELINE, e.g. a `git worktree` of the commit before a change, with
   * its node_modules): its fw variant runs as `baseline` in the same rounds, on a database its own code
   * prepared, so a change is measured against what it changes in one run.
   */
  baselineDir?: string;
}

export function resolveBenchOptions(env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const databases = (env.BENCH_DATABASES ?? 'postgres,pglite')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of databases) {
    if (name !== 'postgres' && name !== 'pglite') {
      throw new Error(`BENCH_DATABASES: unknown database "${name}"; use postgres, pglite or both (comma-separated).`);
    }
  }
  return {
    durationSec: positive(env, 'BENCH_DURATION', 5),
    warmupSec: positive(env, 'BENCH_WARMUP', 1, true),
    connections: Math.round(positive(env, 'BENCH_CONNECTIONS', 32)),
    rounds: Math.round(positive(env, 'BENCH_ROUNDS', 4)),
    databases: databases as DatabaseKind[],
    postgresUrl: benchPostgresUrl(env),
    poolSize: Math.round(positive(env, 'BENCH_POOL_SIZE', 10)),
    ...(env.BENCH_BASELINE ? { baselineDir: baselineDir(env.BENCH_BASELINE) } : {}),
  };
}

/** A checkout of fw given as a benchmark's baseline (`variable` names it in the error). */
export function baselineDir(raw: string, bench: 'http' | 'live' = 'http'): string {
  const dir = path.resolve(raw);
  const variant = `bench/${bench}/variants/fw.ts`;
  if (!existsSync(path.join(dir, variant))) {
    const variable = bench === 'http' ? 'BENCH_BASELINE' : 'BENCH_LIVE_BASELINE';
    throw new Error(`${variable}: ${dir} is not a checkout of fw (no ${variant}); e.g. git worktree add ../fw-before HEAD~1, then npm install there.`);
  }
  return dir;
}

/** A number from the environment: `fallback` when unset, an error naming the variable when invalid. */
/** The server benchmarks create their throwaway databases on (BENCH_DATABASE_URL, else FW_TEST_DATABASE_URL, else local). */
export function benchPostgresUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.BENCH_DATABASE_URL ?? env.FW_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
}

export function positive(env: NodeJS.ProcessEnv, name: string, fallback: number, zeroAllowed = false): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zeroAllowed)) {
    throw new Error(`${name} must be a ${zeroAllowed ? 'non-negative' : 'positive'} number (got "${raw}").`);
  }
  return value;
}
