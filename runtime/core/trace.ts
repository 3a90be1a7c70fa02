import { randomBytes } from 'node:crypto';

export const TRACE_HEADER = 'x-fw-trace-id';

// Long enough to be unique, short and plain enough to be safe in logs and headers.
const wellFormed = /^[A-Za-z0-9][A-Za-z0-9._:-]{7,127}$/;

/** The inbound trace id when it is well-formed, otherwise a fresh one (32 hex digits, W3C-sized). */
export function resolveTraceId(inbound: string | string[] | undefined): string {
  return wellFormedTraceId(inbound) ?? freshTraceId();
}

/** The inbound `x-fw-trace-id` when it is well-formed; undefined otherwise (a caller's junk is never echoed). */
export function wellFormedTraceId(inbound: string | string[] | undefined): string | undefined {
  const value = Array.isArray(inbound) ? inbound[0] : inbound;
  return value !== undefined && wellFormed.test(value) ? value : undefined;
}

const TRACE_BYTES = 16;
const POOL_BYTES = TRACE_BYTES * 256;
let pool = Buffer.alloc(0);
let poolAt = 0;

/**
 * 16 random bytes as hex, from a pool drawn 4 KiB at a time: every request and every live rerun takes
 * one, and a call to the system's random source each time was ~1% of a live commit's CPU (bench/live).
 */
function freshTraceId(): string {
  if (poolAt + TRACE_BYTES > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolAt = 0;
  }
  const id = pool.toString('hex', poolAt, poolAt + TRACE_BYTES);
  poolAt += TRACE_BYTES;
  return id;
}
