import type { Duration } from './entries.ts';

/**
 * One named schedule of `src/crons.ts`: a cron expression (with a time zone) or a plain interval, and
 * the command or action it calls.
 */
export type CronDefinition = CronTiming & {
  /** The command or action to call (its name: the file name in src/commands/ or src/actions/). */
  call: string;
  /** Its args, checked against its `args` schema when the app loads and when each tick runs (default `{}`). */
  args?: unknown;
  /**
   * The tenant the call runs in (a UUID); without one (and without `forEachTenant`) it runs as the
   * system with no tenant, which sees no tenant-scoped rows.
   */
  tenant?: string;
  /**
   * Every tenant instead of one: the name of a query with `policy: 'system'` that answers the tenant ids
   * (UUIDs) — typically from a table that is not tenant-scoped, such as `workspaces`. At each tick fw runs
   * it as the system and calls `call` once in each tenant it answers, as the system there, exactly once
   * per tenant and tick.
   */
  forEachTenant?: string;
};

export type CronTiming =
  | {
      /** A cron expression: five fields (minute hour day-of-month month day-of-week), or six with seconds first. */
      cron: string;
      /** An IANA time zone the expression is read in (default `UTC`), e.g. `Europe/Berlin`. */
      timezone?: string;
      every?: never;
    }
  | {
      /** A plain interval: milliseconds or text (`'15m'`, `'6h'`); ticks are aligned to the Unix epoch (UTC). */
      every: number | Duration;
      cron?: never;
      timezone?: never;
    };

/**
 * The app's crons, by name (`src/crons.ts`). Each tick calls its command or action once, whatever the
 * number of processes. See docs/scheduling.md.
 *
 * @example
 *   export default crons({
 *     nightlyDigest: { cron: '0 7 * * *', timezone: 'Europe/Berlin', call: 'sendDigest' },
 *     purgeSessions: { every: '15m', call: 'purgeExpiredSessions' },
 *   });
 */
export function crons<C extends Record<string, CronDefinition>>(definitions: C): C {
  return definitions;
}
