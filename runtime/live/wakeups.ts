/**
 * Wakeups for the live reader: "something may have been committed, read the log". They carry no data
 * (the log rows are the truth), so a lost notification only delays a read until the next poll.
 *
 * - PostgreSQL: a dedicated `pg.Client` (not from the pool, `application_name` `fw-live-listener`)
 *   runs `LISTEN fw_live`. When it is lost it is re-established with exponential backoff and jitter,
 *   and a `reconnect` wakeup follows (notifications sent meanwhile were lost).
 * - PGlite: the in-process `pglite.listen`.
 * - Polling, always on: every `pollIntervalMs` while there is no working listener, every
 *   `safetyPollIntervalMs` while there is one (which also pings the PostgreSQL listener).
 *
 * @example
 *   const wakeups = createWakeups(db, { onWake: (reason) => reader.wake() });
 *   await wakeups.start();
 *   wakeups.status(); // { mode: 'listen', listener: 'connected', notifications: 3, … }
 *   await wakeups.close();
 */
import type pg from 'pg';
import type { FwDatabase } from '../db/database.ts';
import { LIVE_CHANNEL } from './log.ts';
import { printable } from '../printable.ts';

export type WakeReason = 'notify' | 'poll' | 'reconnect';

export interface WakeupOptions {
  /** Poll interval while no listener works, in ms (default 1000). */
  pollIntervalMs?: number;
  /** Poll interval while the listener works, in ms (default 10 000). */
  safetyPollIntervalMs?: number;
  /** First reconnection delay of the PostgreSQL listener, in ms (default 500). */
  reconnectMinMs?: number;
  /** Longest reconnection delay, in ms (default 30 000). */
  reconnectMaxMs?: number;
  /** Listen for notifications (default true); false polls only. */
  listen?: boolean;
}

export type WakeupStatus = {
  /** `listen`: PostgreSQL LISTEN; `pglite`: PGlite's in-process listen; `poll`: polling only. */
  mode: 'listen' | 'pglite' | 'poll';
  listener: 'connected' | 'reconnecting' | 'off';
  notifications: number;
  polls: number;
  /** Successful re-establishments of a lost listener. */
  reconnects: number;
  /** ISO 8601, or null before the first wakeup. */
  lastWakeAt: string | null;
};

export interface Wakeups {
  /** Starts listening and polling. A listener that cannot connect is retried; this does not reject for it. */
  start(): Promise<void>;
  status(): WakeupStatus;
  /** Stops the timers and closes the listener. */
  close(): Promise<void>;
}

/** Node's timers treat delays above 2^31 - 1 ms as 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;

export function createWakeups(db: FwDatabase, options: WakeupOptions & { onWake(reason: WakeReason): void }): Wakeups {
  const pollIntervalMs = positive('pollIntervalMs', options.pollIntervalMs ?? 1000);
  const safetyPollIntervalMs = positive('safetyPollIntervalMs', options.safetyPollIntervalMs ?? 10_000);
  const reconnectMinMs = positive('reconnectMinMs', options.reconnectMinMs ?? 500);
  const reconnectMaxMs = Math.max(reconnectMinMs, positive('reconnectMaxMs', options.reconnectMaxMs ?? 30_000));
  const driver = db.driver;
  const mode: WakeupStatus['mode'] = options.listen === false ? 'poll' : driver.kind === 'postgres' ? 'listen' : 'pglite';

  let listener: WakeupStatus['listener'] = 'off';
  let notifications = 0;
  let polls = 0;
  let reconnects = 0;
  let lastWakeAt: string | null = null;
  let closed = false;
  let started: Promise<void> | undefined;
  let pollTimer: ReturnType<typeof setTimeout> | undefined;
  let reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  let attempt = 0;
  let client: pg.Client | undefined;
  let pinging = false;
  let reportedDown = false;
  let unlisten: (() => Promise<void>) | undefined;

  const wake = (reason: WakeReason): void => {
    if (closed) return;
    lastWakeAt = new Date().toISOString();
    try {
      options.onWake(reason);
    } catch (error) {
      console.error(`fw live: a wakeup handler failed: ${printable((error as Error).message)}`);
    }
  };

  const schedulePoll = (): void => {
    if (pollTimer) clearTimeout(pollTimer);
    pollTimer = undefined;
    if (closed) return;
    const interval = listener === 'connected' ? safetyPollIntervalMs : pollIntervalMs;
    pollTimer = setTimeout(() => {
      pollTimer = undefined;
      polls++;
      wake('poll');
      ping();
      schedulePoll();
    }, Math.min(interval, MAX_TIMER_MS));
    pollTimer.unref();
  };

  // ---- PostgreSQL listener ----

  /** A cheap query on the listener: a connection that died silently errors and is replaced. */
  const ping = (): void => {
    const current = client;
    if (!current || pinging) return;
    pinging = true;
    current
      .query('select 1')
      .catch((error: unknown) => lost(current, error))
      .finally(() => {
        pinging = false;
      });
  };

  const lost = (which: pg.Client, error?: unknown): void => {
    if (which !== client) return; // an old or never-established client
    client = undefined;
    if (closed) return;
    listener = 'reconnecting';
    if (!reportedDown) {
      reportedDown = true;
      const reason = error instanceof Error ? error.message : 'the connection ended';
      console.error(`fw live: the PostgreSQL listener connection was lost (${reason}); polling every ${pollIntervalMs} ms while reconnecting.`);
    }
    which.end().catch(() => undefined);
    schedulePoll();
    scheduleReconnect();
  };

  /** Opens a listener connection; false (after cleaning up) when that fails. */
  const connect = async (url: string): Promise<boolean> => {
    const { default: pgModule } = await import('pg');
    const candidate = new pgModule.Client({ connectionString: url, application_name: 'fw-live-listener', keepAlive: true });
    // Errors of a client that is not (or no longer) the listener are swallowed: never crash the process.
    candidate.on('error', (error) => lost(candidate, error));
    candidate.on('end', () => lost(candidate));
    candidate.on('notification', (message) => {
      if (candidate !== client || message.channel !== LIVE_CHANNEL) return;
      notifications++;
      wake('notify');
    });
    try {
      await candidate.connect();
      await candidate.query(`listen ${LIVE_CHANNEL}`);
    } catch (error) {
      candidate.end().catch(() => undefined);
      if (!reportedDown) {
        reportedDown = true;
        console.error(`fw live: cannot listen for invalidations (${(error as Error).message}); polling every ${pollIntervalMs} ms while retrying.`);
      }
      return false;
    }
    if (closed) {
      await candidate.end().catch(() => undefined);
      return false;
    }
    client = candidate;
    listener = 'connected';
    if (reportedDown) console.error('fw live: listening for invalidations again.');
    reportedDown = false;
    attempt = 0;
    schedulePoll();
    return true;
  };

  const scheduleReconnect = (): void => {
    if (closed || reconnectTimer || driver.kind !== 'postgres') return;
    const base = Math.min(reconnectMaxMs, reconnectMinMs * 2 ** Math.min(attempt, 30));
    attempt++;
    const delay = Math.min(MAX_TIMER_MS, Math.max(reconnectMinMs, base / 2 + (Math.random() * base) / 2));
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      if (closed) return;
      void connect(driver.url).then((ok) => {
        if (ok) {
          reconnects++;
          wake('reconnect');
        } else if (!closed) {
          listener = 'reconnecting';
          scheduleReconnect();
        }
      });
    }, delay);
    reconnectTimer.unref();
  };

  const startListening = async (): Promise<void> => {
    if (mode === 'poll') return;
    if (driver.kind === 'postgres') {
      if (!(await connect(driver.url)) && !closed) {
        listener = 'reconnecting';
        scheduleReconnect();
      }
      return;
    }
    const { pglite } = driver;
    // Holding the pool's only connection, so LISTEN never runs inside another caller's transaction.
    const stop = await db.admin.connection().execute(() =>
      pglite.listen(LIVE_CHANNEL, () => {
        notifications++;
        wake('notify');
      }),
    );
    if (closed) {
      await stop().catch(() => undefined);
      return;
    }
    unlisten = stop;
    listener = 'connected';
  };

  return {
    start() {
      if (!started) {
        started = startListening().finally(() => schedulePoll());
      }
      return started;
    },

    status: () => ({ mode, listener, notifications, polls, reconnects, lastWakeAt }),

    async close() {
      if (closed) return;
      closed = true;
      if (pollTimer) clearTimeout(pollTimer);
      if (reconnectTimer) clearTimeout(reconnectTimer);
      pollTimer = reconnectTimer = undefined;
      await started?.catch(() => undefined);
      listener = 'off';
      const current = client;
      client = undefined;
      if (current) await current.end().catch(() => undefined);
      const stop = unlisten;
      unlisten = undefined;
      if (stop) await db.admin.connection().execute(() => stop()).catch(() => undefined);
    },
  };
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`fw: ${name} must be a positive number of milliseconds, got ${value}.`);
  return value;
}
