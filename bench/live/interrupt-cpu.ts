/**
 * CPU time the kernel spent in interrupt context (`irq` + `softirq` of /proc/stat), in µs; null off
 * Linux. Loopback TCP work (here: tens of thousands of frames and the server's PostgreSQL round trips)
 * is partly done there and charged to no process, so it is kept apart from "other processes".
 */
import { readFile } from 'node:fs/promises';

const TICK_US = 1_000_000 / 100;

export async function interruptCpuUs(): Promise<number | null> {
  try {
    const fields = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq …
    return ((fields[5] ?? 0) + (fields[6] ?? 0)) * TICK_US;
  } catch {
    return null;
  }
}
