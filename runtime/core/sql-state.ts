/**
 * What a PostgreSQL error (its SQLSTATE) means for the caller. Values that do not fit — class 22
 * (text that is no uuid or number, a value too long or out of range, a bad date), a null in a not-null
 * column (23502), a failed check constraint (23514) — are the caller's input: 400, never 500. This
 * follows PostgREST, which answers the same classes with 400.
 */
import type { Diagnostic, FwErrorCode } from './error-codes.ts';

export interface SqlStateMeaning {
  code: FwErrorCode;
  message: string;
  diagnostics: Diagnostic[];
  /**
   * What production answers instead: the same code, path and SQLSTATE without the server's text. A
   * data error quotes the value it refused, and SQL injected into a handler can make that value
   * anything it can read (`(select … from pg_stat_activity)::int`): the text is for dev mode and the log.
   */
  redacted?: { message: string; diagnostics: Diagnostic[] };
}

/** The fields of a `pg` / PGlite error that fw reads. */
interface PgError {
  code?: unknown;
  message?: unknown;
  column?: unknown;
  constraint?: unknown;
}

const fixed: Record<string, SqlStateMeaning> = {
  '23505': { code: 'conflict', message: 'A row with the same unique value already exists.', diagnostics: [] },
  '23503': { code: 'conflict', message: 'The row refers to a row that does not exist, or is still referred to.', diagnostics: [] },
  '42501': { code: 'forbidden', message: 'The database refused the operation for this caller (row-level security or privileges).', diagnostics: [] },
  '25006': {
    code: 'internal',
    message: 'A write was attempted inside a read-only transaction: queries and liveQueries are read-only. Move the write into a command.',
    diagnostics: [],
  },
};

const hint = 'Check the value against the argument’s type and length (validate it in the entry’s args to get a precise path).';

/**
 * The meaning of `error` when it is a PostgreSQL error fw maps, else undefined. With the `args` the
 * statement ran on, a data error points at the argument whose value PostgreSQL quotes in its message
 * (`invalid input syntax for type uuid: "abc"` → `args.id`), when exactly one argument has that value.
 */
export function sqlStateMeaning(error: unknown, args?: unknown): SqlStateMeaning | undefined {
  const pg = (typeof error === 'object' && error !== null ? error : {}) as PgError;
  const sqlState = pg.code;
  if (typeof sqlState !== 'string' || !/^[0-9A-Z]{5}$/.test(sqlState)) return undefined;
  if (sqlState in fixed) return fixed[sqlState];
  if (!sqlState.startsWith('22') && sqlState !== '23502' && sqlState !== '23514') return undefined;
  const message = typeof pg.message === 'string' ? pg.message : 'The value does not fit the database.';
  const column = typeof pg.column === 'string' ? pg.column : undefined;
  const path = (sqlState.startsWith('22') ? argPathOf(args, quotedValue(message)) : undefined) ?? (column !== undefined ? argPathOfKey(args, column) : undefined) ?? 'args';
  const where = column !== undefined ? ` (column "${column}")` : typeof pg.constraint === 'string' ? ` (constraint "${pg.constraint}")` : '';
  const generic = sqlState === '23502' ? 'A required value is missing.' : sqlState === '23514' ? 'A value breaks a rule of the table.' : 'A value does not fit its type or size.';
  return {
    code: 'validation_failed',
    message: `A value does not fit the database${where}: ${message}`,
    diagnostics: [{ path, code: `sqlstate_${sqlState}`, message, hint }],
    redacted: { message: `A value does not fit the database${where}.`, diagnostics: [{ path, code: `sqlstate_${sqlState}`, message: generic, hint }] },
  };
}

/** The value PostgreSQL quotes in a data error's message: between its first and last double quote. */
function quotedValue(message: string): string | undefined {
  const first = message.indexOf('"');
  const last = message.lastIndexOf('"');
  return first >= 0 && last > first ? message.slice(first + 1, last) : undefined;
}

/** The one path in `args` holding `value` (a string, or a number written the same), else undefined. */
function argPathOf(args: unknown, value: string | undefined): string | undefined {
  if (value === undefined || args === undefined) return undefined;
  const found: string[] = [];
  // Iterative, depth-bounded: args are the caller's, and this runs on an error path.
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: args, path: 'args', depth: 0 }];
  while (stack.length > 0 && found.length < 2) {
    const item = stack.pop()!;
    if (typeof item.value === 'string' || typeof item.value === 'number' || typeof item.value === 'bigint') {
      if (String(item.value) === value) found.push(item.path);
    } else if (typeof item.value === 'object' && item.value !== null && item.depth < 64) {
      for (const [key, child] of Object.entries(item.value)) stack.push({ value: child, path: `${item.path}.${key}`, depth: item.depth + 1 });
    }
  }
  return found.length === 1 ? found[0] : undefined;
}

/** `args.<key>` when the args have a top-level key named like `column` (`due_at` or `dueAt`). */
function argPathOfKey(args: unknown, column: string): string | undefined {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return undefined;
  const camel = column.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  const key = [column, camel].find((k) => Object.hasOwn(args, k));
  return key === undefined ? undefined : `args.${key}`;
}
