import { randomBytes } from 'node:crypto';

export const TRACE_HEADER = 'x-fw-trace-id';

// Long enough to be unique, short and plain enough to be safe in logs and headers.
const wellFormed = /^[A-Za-z0-9][A-Za-z0-9._:-]{7,127}$/;

/** The inbound trace id when it is well-formed, otherwise a fresh one (32 hex digits, W3C-sized). */
export function resolveTraceId(inbound: string | string[] | undefined): string {
  const value = Array.isArray(inbound) ? inbound[0] : inbound;
  return value !== undefined && wellFormed.test(value) ? value : randomBytes(16).toString('hex');
}
