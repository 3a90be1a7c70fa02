/** The benchmark's knobs, all from the environment so `npm run bench:live` needs no flags. */
import { baselineDir, benchPostgresUrl, positive } from '../http/config.ts';

/** `baseline`: the fw variant of another checkout (BENCH_LIVE_BASELINE), on a database its own code prepared. */
export type VariantName = 'fw' | 'bare' | 'baseline';
/**
 * How groups map to tenants. `one`: every group in one tenant, so a write to one group's rows wakes
 * every group of the table in fw (its invalidations are table × tenant, not args). `perGroup`: group
 * g lives in tenant g, so a write wakes exactly the group whose rows changed.
 */
export type TenantLayout = 'one' | 'perGroup';

/**
 * What a point subscribes to and how it writes. `items`: `benchItems({ group })` (one table), one row
 * per commit. `join`: `benchJoined({ group })` (`bench_items` joined to `bench_groups`), one row per
 * commit. `bulkK` (e.g. `bulk20`): `benchItems`, each commit one statement inserting K rows into K
 * consecutive groups (round-robin), so a commit changes K groups.
 */
export type Shape = 'items' | 'join' | `bulk${number}`;

export interface Point {
  subscribers: number;
  groups: number;
  /** Commits per second. */
  rate: number;
  tenants: TenantLayout;
  shape: Shape;
  /**
   * Server processes on the one database (`@P` in BENCH_LIVE_POINTS, default 1): subscriber i goes to
   * process ⌊i / G⌋ mod P, so each group has subscribers on every process (N/G ≥ P). fw's processes share its reruns as
   * a cluster (runtime/live/hub/cluster.ts); bare's each run their own.
   */
  processes: number;
}

/** Rows (and changed groups) per commit: K for `bulkK`, else 1. */
export function rowsPerCommit(shape: Shape): number {
  return shape.startsWith('bulk') ? Number(shape.slice(4)) : 1;
}

/** Parses `items`, `join` or `bulkK` (K a positive integer); null when it is none of them. */
export function parseShape(raw: string): Shape | null {
  if (raw === 'items' || raw === 'join') return raw;
  const bulk = /^bulk([1-9][0-9]*)$/.exec(raw);
  return bulk ? (`bulk${Number(bulk[1])}` as Shape) : null;
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
  /**
   * Another checkout of fw (BENCH_LIVE_BASELINE, e.g. `git worktree add ../fw-before <commit>` with its
   * node_modules): its fw variant runs as `baseline` in the same rounds, so a change is measured against
   * what it changes in one run.
   */
  baselineDir?: string;
  /** Directory for `--cpu-prof` profiles of the server processes, or null (BENCH_LIVE_CPU_PROF). */
  cpuProfDir: string | null;
  quick: boolean;
}

type PointSpec = [subscribers: number, groups: number, rate: number, shape: Shape, processes?: number];

/**
 * The points that matter most. Unless BENCH_LIVE_TENANTS says otherwise, an `items` point with
 * more than one group runs in both tenant layouts, a `join` or `bulkK` point in `one` only.
 */
const DEFAULT_POINTS: PointSpec[] = [
  [1000, 1, 10, 'items'],
  [10_000, 100, 10, 'items'],
  [5000, 1000, 10, 'items'],
  [5000, 1000, 10, 'join'],
  [5000, 1000, 10, 'bulk20'],
  // The cluster point and its one-process twin: 3 processes on one database, each commit changing 1%
  // of the groups. 3000 subscribers, not the 30 000: this 2-core machine holds the servers,
  // the subscriber process and PostgreSQL at once (README.md, "Cluster points").
  [3000, 1000, 10, 'bulk10'],
  [3000, 1000, 10, 'bulk10', 3],
];
const QUICK_POINTS: PointSpec[] = [
  [200, 1, 10, 'items'],
  [200, 20, 10, 'items'],
  [200, 20, 10, 'join'],
  [200, 20, 10, 'bulk5'],
];

export function resolveBenchOptions(env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const quick = env.BENCH_LIVE_QUICK === '1' || env.BENCH_LIVE_QUICK === 'true';
  // Set: every point with more than one group runs in these layouts. Unset: `items` points in both,
  // `join` and `bulkK` points in `one` only.
  const explicitLayouts =
    env.BENCH_LIVE_TENANTS !== undefined && env.BENCH_LIVE_TENANTS.trim() !== ''
      ? list(env, 'BENCH_LIVE_TENANTS', []).map((name) => {
          if (name !== 'one' && name !== 'perGroup') throw new Error(`BENCH_LIVE_TENANTS: unknown layout "${name}"; use one, perGroup or both.`);
          return name as TenantLayout;
        })
      : null;
  if (explicitLayouts !== null && explicitLayouts.length === 0) throw new Error('BENCH_LIVE_TENANTS: no layout; use one, perGroup or both.');
  const layoutsFor = (shape: Shape): TenantLayout[] => explicitLayouts ?? (shape === 'items' ? ['one', 'perGroup'] : ['one']);
  const variants = list(env, 'BENCH_LIVE_VARIANTS', ['fw', 'bare']).map((name) => {
    if (name !== 'fw' && name !== 'bare') throw new Error(`BENCH_LIVE_VARIANTS: unknown variant "${name}"; use fw, bare or both.`);
    return name as VariantName;
  });
  const baseline = env.BENCH_LIVE_BASELINE?.trim() ? baselineDir(env.BENCH_LIVE_BASELINE.trim(), 'live') : undefined;
  if (baseline) variants.push('baseline');

  let specs: PointSpec[];
  if (env.BENCH_LIVE_POINTS) {
    specs = env.BENCH_LIVE_POINTS.split(',').map((item) => item.trim()).filter(Boolean).map((raw): PointSpec => {
      const [spec = '', processesText] = raw.split('@');
      const processes = processesText === undefined ? 1 : Number(processesText.trim());
      if (!Number.isInteger(processes) || processes <= 0) throw new Error(`BENCH_LIVE_POINTS: "${raw}": "@${processesText}" is not a number of server processes, e.g. 5000x1000x10:bulk10@3.`);
      const [triple = '', shapeName = 'items', ...rest] = spec.split(':');
      const parts = triple.split('x').map((part) => Number(part.replaceAll('_', '')));
      if (parts.length !== 3 || parts.some((n) => !Number.isInteger(n) || n <= 0)) {
        throw new Error(`BENCH_LIVE_POINTS: "${raw}" is not subscribers x groups x rate[:shape], e.g. 1000x1x10 or 5000x1000x10:join.`);
      }
      const shape = rest.length === 0 ? parseShape(shapeName.trim()) : null;
      if (shape === null) throw new Error(`BENCH_LIVE_POINTS: "${raw}": unknown shape "${raw.slice(triple.length + 1)}"; use items, join or bulkK (e.g. bulk20).`);
      const [subscribers, groups, rate] = parts as [number, number, number];
      if (rowsPerCommit(shape) > groups) {
        throw new Error(`BENCH_LIVE_POINTS: "${raw}": ${shape} writes ${rowsPerCommit(shape)} different groups per commit but the point has only ${groups}.`);
      }
      return [subscribers, groups, rate, shape, processes];
    });
  } else if (env.BENCH_LIVE_SUBSCRIBERS || env.BENCH_LIVE_GROUPS || env.BENCH_LIVE_RATE) {
    // Any of the three set: every combination, the unset ones at their first default.
    const subscribers = integers(env, 'BENCH_LIVE_SUBSCRIBERS', [quick ? 200 : 1000]);
    const groups = integers(env, 'BENCH_LIVE_GROUPS', [1]);
    const rates = integers(env, 'BENCH_LIVE_RATE', [10]);
    specs = subscribers.flatMap((n) => groups.flatMap((g) => rates.map((w): PointSpec => [n, g, w, 'items'])));
  } else {
    specs = quick ? QUICK_POINTS : DEFAULT_POINTS;
  }
  const points: Point[] = [];
  for (const [subscribers, groups, rate, shape, processes = 1] of specs) {
    if (groups > subscribers) {
      process.stderr.write(`bench/live: skipping ${subscribers} subscribers over ${groups} groups (a group needs a subscriber).\n`);
      continue;
    }
    // With one group the two layouts are the same benchmark: run it once.
    const layouts = layoutsFor(shape);
    for (const tenants of groups === 1 ? [layouts[0]!] : layouts) points.push({ subscribers, groups, rate, tenants, shape, processes });
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
    postgresUrl: benchPostgresUrl(env),
    poolSize: Math.round(positive(env, 'BENCH_POOL_SIZE', 10)),
    cpuProfDir: env.BENCH_LIVE_CPU_PROF ? env.BENCH_LIVE_CPU_PROF : null,
    ...(baseline ? { baselineDir: baseline } : {}),
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
