/**
 * The writer: commits at a fixed rate (open loop: the i-th commit starts at start + i / rate, whether
 * or not earlier ones have returned), each one INSERT of K rows (1, or K for `bulkK`) into K
 * consecutive groups, round-robin over the groups, so every row of a commit is in another group. Within
 * a group `n` goes 1, 2, 3… row by row. It writes straight to PostgreSQL with `pg` for both servers:
 * fw's capture triggers log the write and notify fw's listener; for the bare server the same
 * transaction also sends `NOTIFY bench_live 'tenant|group'` for each written group. A commit's time is
 * when its COMMIT returned, on the machine-wide monotonic clock.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { TenantLayout, VariantName } from './config.ts';
import { type RowWrite, tenantOfGroup, writeStatement } from './app.ts';
import type { WriteRecord } from './protocol.ts';

const WRITER_APPLICATION = 'fw-bench-live-writer';

export const nowUs = () => Number(process.hrtime.bigint() / 1000n);

export interface Writer {
  /** `count` commits at `rate` per second; resolves when the last one returned. */
  write(count: number, rate: number, measured: boolean, onCommit: (write: WriteRecord) => void): Promise<WriteRecord[]>;
  /** The PostgreSQL backends of the writer's connections (the writes' share of the database's CPU). */
  backendPids(): Promise<number[]>;
  /** Commits so far, and how late the latest one started against its schedule (ms, worst so far). */
  readonly commits: number;
  readonly worstStartLagMs: number;
  close(): Promise<void>;
}

export function createWriter(url: string, options: { variant: VariantName; groups: number; tenants: TenantLayout; rowsPerCommit: number }): Writer {
  if (options.rowsPerCommit > options.groups) throw new Error(`bench/live: ${options.rowsPerCommit} rows per commit need as many groups (got ${options.groups}).`);
  // A few connections, so one slow commit does not hold back the schedule.
  // Named, and kept open while idle, so its backends can be told from the server's (`backendPids`).
  const pool = new pg.Pool({ connectionString: url, max: 4, idleTimeoutMillis: 0, application_name: WRITER_APPLICATION });
  pool.on('error', () => undefined);
  const nextN = new Map<number, number>();
  let seq = 0;
  /** The group of the next row, round-robin. */
  let nextGroup = 0;
  let commits = 0;
  let worstStartLagMs = 0;

  const commitOne = async (measured: boolean, onCommit: (write: WriteRecord) => void): Promise<WriteRecord> => {
    const rows: RowWrite[] = [];
    for (let k = 0; k < options.rowsPerCommit; k++) {
      const group = nextGroup;
      nextGroup = (nextGroup + 1) % options.groups;
      const n = (nextN.get(group) ?? 0) + 1;
      nextN.set(group, n);
      rows.push({ seq: ++seq, group, n, tenant: tenantOfGroup(group, options.tenants) });
    }
    const sentUs = nowUs();
    await pool.query(writeStatement(rows, options.variant === 'bare'));
    const record: WriteRecord = { rows: rows.map(({ seq, group }) => ({ seq, group })), sentUs, ackUs: nowUs(), measured };
    commits++;
    onCommit(record);
    return record;
  };

  return {
    async backendPids() {
      const { rows } = await pool.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1 and datname = current_database()', [WRITER_APPLICATION]);
      return rows.map((row) => row.pid);
    },
    async write(count, rate, measured, onCommit) {
      const periodMs = 1000 / rate;
      const start = performance.now();
      const inFlight: Array<Promise<WriteRecord>> = [];
      for (let i = 0; i < count; i++) {
        const due = start + i * periodMs;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        worstStartLagMs = Math.max(worstStartLagMs, performance.now() - due);
        inFlight.push(commitOne(measured, onCommit));
      }
      return Promise.all(inFlight);
    },
    get commits() {
      return commits;
    },
    get worstStartLagMs() {
      return worstStartLagMs;
    },
    close: () => pool.end(),
  };
}
