/** Milliseconds per unit of a {@link parseDuration} text. */
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration in milliseconds: a number of milliseconds as it is, or text `<number><unit>` with unit
 * `ms`, `s`, `m`, `h` or `d` (`'90s'`, `'1.5h'`). Throws a TypeError naming `where` for anything else,
 * a negative or non-finite value included.
 */
export function parseDuration(value: unknown, where: string): number {
  if (typeof value === 'number') {
    if (Number.isFinite(value) && value >= 0) return value;
  } else if (typeof value === 'string') {
    const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/.exec(value.trim());
    if (match) return Number(match[1]) * UNITS[match[2]!]!;
  }
  throw new TypeError(`${where}: the duration must be milliseconds ≥ 0 or text like '30s', '15m', '2h', '7d' — got ${JSON.stringify(value) ?? String(value)}.`);
}
