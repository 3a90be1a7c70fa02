/**
 * CPU time outside the server process, read from /proc (Linux only; elsewhere the figures are null):
 * the whole machine's busy share, and the PostgreSQL backends serving the benchmark database.
 */
import { readdir, readFile } from 'node:fs/promises';

/** Clock ticks per second of /proc figures; 100 on every mainstream Linux build. */
const TICK_US = 1_000_000 / 100;

export interface CpuSnapshot {
  machine: { busy: number; total: number } | null;
  /** CPU ticks per PostgreSQL backend pid connected to the benchmark database. */
  backends: Map<number, number> | null;
}

export interface CpuDelta {
  /** CPU time all processes used during the interval, and what all cores could have used, in µs. */
  machine: { busyUs: number; capacityUs: number } | null;
  /** CPU time of the benchmark database's PostgreSQL backends, in microseconds. */
  databaseCpuUs: number | null;
}

export async function snapshotCpu(databaseName: string | null): Promise<CpuSnapshot> {
  return { machine: await machineTicks(), backends: databaseName ? await backendTicks(databaseName) : null };
}

export function cpuSince(before: CpuSnapshot, after: CpuSnapshot): CpuDelta {
  let machine: CpuDelta['machine'] = null;
  if (before.machine && after.machine && after.machine.total > before.machine.total) {
    machine = {
      busyUs: (after.machine.busy - before.machine.busy) * TICK_US,
      capacityUs: (after.machine.total - before.machine.total) * TICK_US,
    };
  }
  let databaseCpuUs: number | null = null;
  if (before.backends && after.backends) {
    databaseCpuUs = 0;
    // Backends that connected during the interval started from zero.
    for (const [pid, ticks] of after.backends) databaseCpuUs += (ticks - (before.backends.get(pid) ?? 0)) * TICK_US;
  }
  return { machine, databaseCpuUs };
}

/** CPU time, in µs, of the backends `pids` between two snapshots (null without backend figures). */
export function backendsCpuUs(before: CpuSnapshot, after: CpuSnapshot, pids: readonly number[]): number | null {
  if (!before.backends || !after.backends) return null;
  let us = 0;
  for (const pid of pids) us += ((after.backends.get(pid) ?? 0) - (before.backends.get(pid) ?? 0)) * TICK_US;
  return us;
}

async function machineTicks(): Promise<{ busy: number; total: number } | null> {
  try {
    const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0]!;
    const fields = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already inside user).
    const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

/** Backends show `postgres: <cluster>: <user> <database> <client> <state>` as their command line. */
async function backendTicks(databaseName: string): Promise<Map<number, number> | null> {
  let pids: string[];
  try {
    pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const ticks = new Map<number, number>();
  await Promise.all(
    pids.map(async (pid) => {
      try {
        const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replaceAll('\0', ' ');
        if (!cmdline.startsWith('postgres: ') || !cmdline.includes(` ${databaseName} `)) return;
        const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
        // Fields after the parenthesised command name; utime and stime are the 14th and 15th overall.
        const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        ticks.set(Number(pid), Number(rest[11]) + Number(rest[12]));
      } catch {
        // The process ended between readdir and read.
      }
    }),
  );
  return ticks;
}
