/** The benchmark's knobs, all from the environment so `npm run bench:live` needs no flags. */
import { positive } from '../http/config.ts';

export type VariantName = 'fw' | 'bare';
/**
 * How groups map to tenants. `one`: every group in one tenant, so a write to one group's rows wakes
 * every group of the table in fw (its invalidations are table × tenant, not args). `perGroup`: group
 * g lives in tenant g, so a write wakes exactly the group whose rows changed.
 */
export type TenantLayout = 'one' | 'perGroup';

export interface Point {
  subscribers: number;
  groups: number;
  /** Commits per second. */
  rate: number;
  tenants: TenantLayout;
}

export interface BenchOptions {
  points: Point[];
  variants: VariantName[];
  /** How often every (variant, point) runs, each time with a fresh server; rounds are interleaved (BENCH_LIVE_ROUNDS, default 2). */
  rounds: number;
  /** Measured seconds of writes per run (BENCH_LIVE_DURATION, default 10). */
  durationSec: number;
  /** Unmeasured seconds of writes before each measurement (BENCH_LIVE_WARMUP, default 2). */
  warmupSec: number;
  /** Longest wait for the last frames after the last measured commit (BENCH_LIVE_DRAIN, default 20 s). */
  drainSec: number;
  /** Subscriber processes (BENCH_LIVE_CLIENT_PROCESSES, default 1). */
  clientProcesses: number;
  /** Streams being opened at once per client process (BENCH_LIVE_OPEN_CONCURRENCY, default 64). */
  openConcurrency: number;
  postgresUrl: string;
  /** PostgreSQL connections of each server's query pool (BENCH_POOL_SIZE, default 10, fw's default). */
  poolSize: number;
  /** Directory for `--cpu-prof` profiles of the server processes, or null (BENCH_LIVE_CPU_PROF). */
  cpuProfDir: string | null;
  quick: boolean;
}

/** The points that matter most; each point with more than one group runs in both tenant layouts. */
const DEFAULT_POINTS: Array<[number, number, number]> = [
  [1000, 1, 10],
  [10_000, 100, 10],
  [5000, 1000, 10],
];
const QUICK_POINTS: Array<[number, number, number]> = [
  [200, 1, 10],
  [200, 20, 10],
];

export function resolveBenchOptions(env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const quick = env.BENCH_LIVE_QUICK === '1' || env.BENCH_LIVE_QUICK === 'true';
  const layouts = list(env, 'BENCH_LIVE_TENANTS', ['one', 'perGroup']).map((name) => {
    if (name !== 'one' && name !== 'perGroup') throw new Error(`BENCH_LIVE_TENANTS: unknown layout "${name}"; use one, perGroup or both.`);
    return name as TenantLayout;
  });
  const variants = list(env, 'BENCH_LIVE_VARIANTS', ['fw', 'bare']).map((name) => {
    if (name !== 'fw' && name !== 'bare') throw new Error(`BENCH_LIVE_VARIANTS: unknown variant "${name}"; use fw, bare or both.`);
    return name as VariantName;
  });

  let triples: Array<[number, number, number]>;
  if (env.BENCH_LIVE_POINTS) {
    triples = env.BENCH_LIVE_POINTS.split(',').map((raw) => {
      const parts = raw.trim().split('x').map(Number);
      if (parts.length !== 3 || parts.some((n) => !Number.isInteger(n) || n <= 0)) {
        throw new Error(`BENCH_LIVE_POINTS: "${raw}" is not subscribers x groups x rate, e.g. 1000x1x10.`);
      }
      return parts as [number, number, number];
    });
  } else if (env.BENCH_LIVE_SUBSCRIBERS || env.BENCH_LIVE_GROUPS || env.BENCH_LIVE_RATE) {
    // Any of the three set: every combination, the unset ones at their first default.
    const subscribers = integers(env, 'BENCH_LIVE_SUBSCRIBERS', [quick ? 200 : 1000]);
    const groups = integers(env, 'BENCH_LIVE_GROUPS', [1]);
    const rates = integers(env, 'BENCH_LIVE_RATE', [10]);
    triples = subscribers.flatMap((n) => groups.flatMap((g) => rates.map((w) => [n, g, w] as [number, number, number])));
  } else {
    triples = quick ? QUICK_POINTS : DEFAULT_POINTS;
  }
  const points: Point[] = [];
  for (const [subscribers, groups, rate] of triples) {
    if (groups > subscribers) {
      process.stderr.write(`bench/live: skipping ${subscribers} subscribers over ${groups} groups (a group needs a subscriber).\n`);
      continue;
    }
    // With one group the two layouts are the same benchmark: run it once.
    for (const tenants of groups === 1 ? [layouts[0]!] : layouts) points.push({ subscribers, groups, rate, tenants });
  }
  if (points.length === 0) throw new Error('bench/live: nothing to run.');

  return {
    points,
    variants,
    rounds: Math.round(positive(env, 'BENCH_LIVE_ROUNDS', quick ? 1 : 2)),
    durationSec: positive(env, 'BENCH_LIVE_DURATION', quick ? 3 : 10),
    warmupSec: positive(env, 'BENCH_LIVE_WARMUP', quick ? 1 : 2, true),
    drainSec: positive(env, 'BENCH_LIVE_DRAIN', 20),
    clientProcesses: Math.round(positive(env, 'BENCH_LIVE_CLIENT_PROCESSES', 1)),
    openConcurrency: Math.round(positive(env, 'BENCH_LIVE_OPEN_CONCURRENCY', 64)),
    postgresUrl: env.BENCH_DATABASE_URL ?? env.FW_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    poolSize: Math.round(positive(env, 'BENCH_POOL_SIZE', 10)),
    cpuProfDir: env.BENCH_LIVE_CPU_PROF ? env.BENCH_LIVE_CPU_PROF : null,
    quick,
  };
}

function list(env: NodeJS.ProcessEnv, name: string, fallback: string[]): string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  return raw.split(',').map((item) => item.trim()).filter(Boolean);
}

function integers(env: NodeJS.ProcessEnv, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  return raw.split(',').map((item) => {
    const value = Number(item.trim().replaceAll('_', ''));
    if (!Number.isInteger(value) || value <= 0) throw new Error(`${name}: "${item}" is not a positive integer.`);
    return value;
  });
}
