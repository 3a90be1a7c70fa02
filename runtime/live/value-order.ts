/**
 * How PostgreSQL orders and compares the values a capture trigger records, for the read-set conditions
 * that compare (`<`, `between`, `<>`, `NOT IN`, and `=` on kinds whose text form is not unique). Both
 * sides arrive as text: a changed value as `to_jsonb(row) ->> column` prints it, a condition's constant
 * as `orderedConstant` spells it. Every comparison is exact, or undefined when fw cannot be sure what
 * PostgreSQL would answer (the caller then counts the row as matching — it only widens):
 *
 * - integer, bigint: as integers (BigInt).
 * - numeric: as exact decimals (`1.50` = `1.5`; no floats), with PostgreSQL's order of the specials:
 *   -Infinity < every number < Infinity < NaN, and NaN = NaN.
 * - timestamptz: as instants, in microseconds (to_jsonb prints the session's offset: `…+05:30`),
 *   ±infinity at the ends; BC years and years past 9999 included.
 * - date: as days, ±infinity at the ends.
 * - uuid: by bytes, which is the order of the canonical lower-case text.
 * - boolean: false < true.
 * - text: by bytes of UTF-8 (= code points) when the database's collation orders that way ('bytes');
 *   with `ascii`, only when both sides are ASCII (libc's C.UTF-8); never otherwise (`text-semantics.ts`).
 * - enum: equality only (an enum's order is its type's, which hand-written SQL may have changed).
 */
import type { ColumnKind } from '../core/schema.ts';

/** How text compares in this database, for ordering (see text-semantics.ts). */
export type TextOrder = 'bytes' | 'ascii' | 'none';

/** A parsed value: rank orders the specials (-1 = -infinity, 0 = a finite value, 1 = +infinity, 2 = NaN). */
interface Key {
  rank: -1 | 0 | 1 | 2;
  n?: bigint;
  /** numeric: mantissa × 10^exp. */
  exp?: number;
  s?: string;
}

const ASCII = /^[\x00-\x7f]*$/;
const SURROGATE = /[\ud800-\udfff]/;

/**
 * Compares two values of `kind` (each its captured text form, or a constant from `orderedConstant`):
 * negative, 0 or positive, or undefined when fw cannot tell exactly.
 */
export function compareValues(kind: ColumnKind, a: string, b: string, text: TextOrder): number | undefined {
  if (kind === 'text' || kind === 'enum') {
    if (a === b) return 0;
    if (kind === 'enum') return undefined;
    if (text === 'none') return undefined;
    if (text === 'ascii' && !(ASCII.test(a) && ASCII.test(b))) return undefined;
    return compareCodePoints(a, b);
  }
  if (kind === 'uuid' || kind === 'boolean') {
    // uuids arrive canonical (lower case, hyphens in place); 'false' < 'true' as text too.
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const x = parseKey(kind, a);
  const y = parseKey(kind, b);
  if (!x || !y) return undefined;
  return compareKeys(x, y);
}

/** Whether two values of `kind` are equal as PostgreSQL's `=` says (undefined: cannot tell). */
export function equalValues(kind: ColumnKind, a: string, b: string, text: TextOrder): boolean | undefined {
  // Deterministic collations (every database default) call text equal only when its bytes are.
  if (kind === 'text' || kind === 'enum' || kind === 'uuid' || kind === 'boolean') return a === b;
  const order = compareValues(kind, a, b, text);
  return order === undefined ? undefined : order === 0;
}

/** UTF-8 byte order is code point order; JavaScript's `<` compares UTF-16 units, which differs above U+FFFF. */
function compareCodePoints(a: string, b: string): number {
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

function compareKeys(x: Key, y: Key): number {
  if (x.rank !== y.rank || x.rank !== 0) return x.rank - y.rank;
  if (x.exp === undefined || y.exp === undefined) return x.n! < y.n! ? -1 : x.n! > y.n! ? 1 : 0;
  // numeric: align the exponents (exact; exponents are bounded where the constants are parsed).
  let m = x.n!;
  let n = y.n!;
  if (x.exp > y.exp) m *= 10n ** BigInt(x.exp - y.exp);
  else if (y.exp > x.exp) n *= 10n ** BigInt(y.exp - x.exp);
  return m < n ? -1 : m > n ? 1 : 0;
}

const cache = new Map<string, Key | null>();

function parseKey(kind: ColumnKind, text: string): Key | undefined {
  const id = `${kind}\u0000${text}`;
  let key = cache.get(id);
  if (key === undefined) {
    key = parseUncached(kind, text) ?? null;
    // A bounded memo: the same changed values are matched against many groups.
    if (cache.size > 50_000) cache.clear();
    cache.set(id, key);
  }
  return key ?? undefined;
}

function parseUncached(kind: ColumnKind, text: string): Key | undefined {
  switch (kind) {
    case 'integer':
    case 'bigint':
      return /^-?\d{1,20}$/.test(text) ? { rank: 0, n: BigInt(text) } : undefined;
    case 'numeric':
      return parseNumeric(text);
    case 'timestamptz':
      return parseTimestamptz(text);
    case 'date':
      return parseDate(text);
    default:
      return undefined;
  }
}

const NUMERIC = /^([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,4}))?$/;

function parseNumeric(text: string): Key | undefined {
  if (text === 'NaN') return { rank: 2 };
  if (text === 'Infinity') return { rank: 1 };
  if (text === '-Infinity') return { rank: -1 };
  const m = NUMERIC.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '') || text.length > 1100) return undefined;
  const digits = `${m[2]}${m[3] ?? ''}`;
  const exp = Number(m[4] ?? 0) - (m[3] ?? '').length;
  if (Math.abs(exp) > 2000) return undefined;
  const n = BigInt(digits === '' ? '0' : digits);
  return { rank: 0, n: m[1] === '-' ? -n : n, exp };
}

/** Days from 1970-01-01 in the proleptic Gregorian calendar (PostgreSQL's), for an astronomical year. */
function daysFromCivil(year: bigint, month: number, day: number): bigint {
  const y = month <= 2 ? year - 1n : year;
  const era = (y >= 0n ? y : y - 399n) / 400n;
  const yoe = y - era * 400n;
  const mp = BigInt((month + 9) % 12);
  const doy = (153n * mp + 2n) / 5n + BigInt(day - 1);
  const doe = yoe * 365n + yoe / 4n - yoe / 100n + doy;
  return era * 146097n + doe - 719468n;
}

function validDate(year: bigint, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4n === 0n && (year % 100n !== 0n || year % 400n === 0n);
  const lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return day <= lengths[month - 1]!;
}

/** A year as printed (`0044 … BC` is astronomical year -43). */
const astronomical = (digits: string, bc: boolean): bigint => (bc ? 1n - BigInt(digits) : BigInt(digits));

const DATE = /^(\d{4,})-(\d{2})-(\d{2})( BC)?$/;

function parseDate(text: string): Key | undefined {
  if (text === 'infinity') return { rank: 1 };
  if (text === '-infinity') return { rank: -1 };
  const m = DATE.exec(text);
  if (!m) return undefined;
  const year = astronomical(m[1]!, m[4] !== undefined);
  const [month, day] = [Number(m[2]), Number(m[3])];
  if (!validDate(year, month, day)) return undefined;
  return { rank: 0, n: daysFromCivil(year, month, day) };
}

/** `to_jsonb` of a timestamptz: ISO 8601 with the session's offset (`+05:30`, `-03:00:15` for odd zones). */
const TIMESTAMPTZ = /^(\d{4,})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?(?::(\d{2}))?)( BC)?$/;

function parseTimestamptz(text: string): Key | undefined {
  if (text === 'infinity') return { rank: 1 };
  if (text === '-infinity') return { rank: -1 };
  const m = TIMESTAMPTZ.exec(text);
  if (!m) return undefined;
  const year = astronomical(m[1]!, m[13] !== undefined);
  const [month, day, hour, minute, second] = [Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])];
  if (!validDate(year, month, day) || hour > 23 || minute > 59 || second > 59) return undefined;
  const fraction = BigInt((m[7] ?? '').padEnd(6, '0'));
  const offsetHours = Number(m[10] ?? 0);
  const offsetMinutes = Number(m[11] ?? 0);
  const offsetSeconds = Number(m[12] ?? 0);
  if (offsetHours > 15 || offsetMinutes > 59 || offsetSeconds > 59) return undefined;
  const offset = BigInt((offsetHours * 3600 + offsetMinutes * 60 + offsetSeconds) * (m[9] === '-' ? -1 : 1));
  const seconds = daysFromCivil(year, month, day) * 86400n + BigInt(hour * 3600 + minute * 60 + second) - offset;
  return { rank: 0, n: seconds * 1_000_000n + fraction };
}

/** PostgreSQL's timestamptz range: 4713 BC to 294276 AD. */
const MIN_TIMESTAMP_MS = -210866803200000;
const MAX_TIMESTAMP_MS = 8210266876800000;

/**
 * A query parameter as a value of `kind` for comparisons, in a text form `compareValues` reads, or
 * undefined when fw cannot be sure what value PostgreSQL would make of it (then the condition is
 * dropped). Only forms with one meaning whatever the session says: a Date for timestamptz (an instant,
 * whatever the driver's spelling), ISO text with an explicit offset; `YYYY-MM-DD` text for date (a Date
 * becomes a date through the driver's and the session's time zones: not kept); decimal text or a finite
 * number for numeric; integers as for `=`.
 */
export function orderedConstant(kind: ColumnKind, value: unknown): string | undefined {
  switch (kind) {
    case 'integer':
    case 'bigint': {
      let n: bigint | undefined;
      if (typeof value === 'number' && Number.isSafeInteger(value)) n = BigInt(value);
      else if (typeof value === 'bigint') n = value;
      else if (typeof value === 'string' && /^\s*[+-]?\d{1,30}\s*$/.test(value)) n = BigInt(value.trim());
      if (n === undefined) return undefined;
      const limit = kind === 'integer' ? 2n ** 31n : 2n ** 63n;
      return n >= -limit && n < limit ? n.toString() : undefined;
    }
    case 'numeric': {
      let text: string | undefined;
      if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
      else if (typeof value === 'bigint') text = value.toString();
      else if (typeof value === 'string') text = value.trim();
      if (text === undefined || text === 'NaN' || /inf/i.test(text)) return undefined;
      const key = parseNumeric(text.replace(/^\+/, ''));
      return key && key.rank === 0 ? text.replace(/^\+/, '') : undefined;
    }
    case 'timestamptz': {
      if (value instanceof Date) {
        const ms = value.getTime();
        if (!Number.isFinite(ms) || ms < MIN_TIMESTAMP_MS || ms > MAX_TIMESTAMP_MS) return undefined;
        // Printed as an instant the parser reads back (UTC, microseconds).
        return printInstant(BigInt(ms) * 1000n);
      }
      if (typeof value !== 'string') return undefined;
      const text = value.trim();
      // An explicit offset or Z (without one, PostgreSQL reads the session's time zone).
      const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|[+-]\d{2}(?::?\d{2})?)$/.exec(text);
      if (!m) return undefined;
      const normal = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? '00'}${m[7] ? `.${m[7]}` : ''}${m[8]}`;
      return parseTimestamptz(normal) ? normal : undefined;
    }
    case 'date': {
      if (typeof value !== 'string') return undefined;
      const text = value.trim();
      return /^\d{4}-\d{2}-\d{2}$/.test(text) && parseDate(text) ? text : undefined;
    }
    case 'uuid': {
      if (typeof value !== 'string') return undefined;
      let hex = value.trim();
      if (hex.startsWith('{') && hex.endsWith('}')) hex = hex.slice(1, -1);
      hex = hex.replaceAll('-', '').toLowerCase();
      if (!/^[0-9a-f]{32}$/.test(hex)) return undefined;
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    }
    case 'boolean':
      return typeof value === 'boolean' ? String(value) : undefined;
    case 'text':
    case 'enum':
      return typeof value === 'string' && !value.includes('\u0000') ? value : undefined;
    default:
      return undefined;
  }
}

function printInstant(micros: bigint): string {
  const days = micros >= 0n ? micros / 86_400_000_000n : -((-micros + 86_399_999_999n) / 86_400_000_000n);
  const rest = micros - days * 86_400_000_000n;
  const date = new Date(Number(days) * 86_400_000);
  const year = date.getUTCFullYear();
  const yearText = year > 0 ? String(year).padStart(4, '0') : `${String(1 - year).padStart(4, '0')}`;
  const pad = (n: number) => String(n).padStart(2, '0');
  const seconds = Number(rest / 1_000_000n);
  const fraction = String(rest % 1_000_000n).padStart(6, '0');
  return `${yearText}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}T${pad(Math.floor(seconds / 3600))}:${pad(Math.floor(seconds / 60) % 60)}:${pad(seconds % 60)}.${fraction}+00:00${year > 0 ? '' : ' BC'}`;
}
