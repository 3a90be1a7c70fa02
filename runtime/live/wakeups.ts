/**
 * Wakeups for the live reader: "something may have been committed, read the log". A notification's
 * payload is handed on (it may carry a signed log row, notice.ts), but the log rows are the truth, so a
 * lost notification only delays a read until the next poll.
 *
 * - PostgreSQL: a dedicated `pg.Client` (not from the pool, `application_name` `fw-live-listener`)
 *   runs `LISTEN fw_live`. When it is lost it is re-established with exponential backoff and jitter,
 *   and a `reconnect` wakeup follows (notifications sent meanwhile were lost).
 * - PGlite: the in-process `pglite.listen`.
 * - Polling, always on: every `pollIntervalMs` while there is no working listener, every
 *   `safetyPollIntervalMs` while there is one (which also pings the PostgreSQL listener).
 * - A listener can be connected and still hear nothing: `LISTEN` through a transaction pooler
 *   (PgBouncer's `pool_mode = transaction`) registers on a server session the pooler hands to others.
 *   So after connecting and on every safety poll the listener sends itself a probe NOTIFY and expects
 *   it within `probeTimeoutMs`; unheard, it is `deaf`: said once, loudly, with the fix
 *   (`FW_DIRECT_DATABASE_URL`), reported in the status, and polled at the fast interval.
 *
 * @example
 *   const wakeups = createWakeups(db, { onWake: (reason) => reader.wake() });
 *   await wakeups.start();
 *   wakeups.status(); // { mode: 'listen', listener: 'connected', notifications: 3, … }
 *   await wakeups.close();
 */
import type pg from 'pg';
import { CompiledQuery } from 'kysely';
import type { FwDatabase } from '../db/database.ts';
import { backoffDelay } from '../core/backoff.ts';
import { LIVE_CHANNEL } from '../db/live-capture.ts';
import { printable } from '../core/printable.ts';

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
  /** How long the PostgreSQL listener may take to hear its own probe before it counts as deaf, in ms (default 3000). */
  probeTimeoutMs?: number;
}

/** What is wrong with the wakeups, with its fix (`listener_deaf`). */
export interface WakeupProblem {
  code: 'listener_deaf';
  message: string;
  fix: string;
}

export type WakeupStatus = {
  /** `listen`: PostgreSQL LISTEN; `pglite`: PGlite's in-process listen; `poll`: polling only. */
  mode: 'listen' | 'pglite' | 'poll';
  /** `deaf`: connected, but its own probe NOTIFY never arrived (a transaction pooler between). */
  listener: 'connected' | 'deaf' | 'reconnecting' | 'off';
  /** Notifications of writes (the listener's probes are not counted). */
  notifications: number;
  /** Probe NOTIFYs the listener sent itself and heard back: it is known to hear. */
  probesHeard: number;
  polls: number;
  /** Successful re-establishments of a lost listener. */
  reconnects: number;
  /** ISO 8601, or null before the first wakeup. */
  lastWakeAt: string | null;
  /** Null while the wakeups work as they should. */
  problem: WakeupProblem | null;
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

export function createWakeups(db: FwDatabase, options: WakeupOptions & { onWake(reason: WakeReason, payload?: string): void }): Wakeups {
  const pollIntervalMs = positive('pollIntervalMs', options.pollIntervalMs ?? 1000);
  const safetyPollIntervalMs = positive('safetyPollIntervalMs', options.safetyPollIntervalMs ?? 10_000);
  const reconnectMinMs = positive('reconnectMinMs', options.reconnectMinMs ?? 500);
  const reconnectMaxMs = Math.max(reconnectMinMs, positive('reconnectMaxMs', options.reconnectMaxMs ?? 30_000));
  const probeTimeoutMs = positive('probeTimeoutMs', options.probeTimeoutMs ?? 3000);
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
  // The probe NOTIFY in flight (its payload) and the timer that declares the listener deaf.
  let probe: string | undefined;
  let probeTimer: ReturnType<typeof setTimeout> | undefined;
  let probeCount = 0;
  let probesHeard = 0;

  const wake = (reason: WakeReason, payload?: string): void => {
    if (closed) return;
    lastWakeAt = new Date().toISOString();
    try {
      options.onWake(reason, payload);
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
      // Connected: check it still hears. Deaf: a probe now and then notices when it hears again.
      if (listener === 'connected' || (listener === 'deaf' && polls % Math.max(1, Math.round(safetyPollIntervalMs / pollIntervalMs)) === 0)) sendProbe();
      schedulePoll();
    }, Math.min(interval, MAX_TIMER_MS));
    pollTimer.unref();
  };

  // ---- PostgreSQL listener ----

  const deafProblem: WakeupProblem = {
    code: 'listener_deaf',
    message: `The live listener is connected but does not hear its own NOTIFY: it reaches PostgreSQL through a transaction pooler, which cannot keep a LISTEN. Live updates fall back to polling every ${pollIntervalMs} ms.`,
    fix: 'Set FW_DIRECT_DATABASE_URL to a URL that reaches PostgreSQL without the transaction pooler (a session pooler or the server itself); DATABASE_URL keeps the pooler for requests.',
  };

  /** Sends the listener a NOTIFY of its own (through the owner's pool, like any write) and expects it back. */
  const sendProbe = (): void => {
    if (!client || closed || probe) return;
    const payload = `fw-probe:${process.pid}:${++probeCount}`;
    probe = payload;
    db.admin
      .executeQuery(CompiledQuery.raw('select pg_notify($1, $2)', [LIVE_CHANNEL, payload]))
      .then(() => {
        if (probe !== payload || closed) return;
        probeTimer = setTimeout(() => unheard(payload), probeTimeoutMs);
        probeTimer.unref();
      })
      .catch(() => {
        // The database is away: the ping and the reconnection deal with it; probe again later.
        if (probe === payload) probe = undefined;
      });
  };

  const heard = (payload: string): void => {
    if (payload !== probe) return;
    probe = undefined;
    probesHeard++;
    if (probeTimer) clearTimeout(probeTimer);
    probeTimer = undefined;
    if (listener === 'deaf') {
      listener = 'connected';
      console.error('fw live: the listener hears its NOTIFY again; back to the safety poll.');
      schedulePoll();
    }
  };

  const unheard = (payload: string): void => {
    if (payload !== probe || closed || !client) return;
    probe = undefined;
    probeTimer = undefined;
    if (listener === 'deaf') return;
    listener = 'deaf';
    console.error(`fw live: listener_deaf — ${deafProblem.message}\n  fix: ${deafProblem.fix}`);
    schedulePoll();
  };

  const forgetProbe = (): void => {
    probe = undefined;
    if (probeTimer) clearTimeout(probeTimer);
    probeTimer = undefined;
  };

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
    forgetProbe();
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
      if (message.payload?.startsWith('fw-probe:')) return heard(message.payload);
      notifications++;
      wake('notify', message.payload);
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
    sendProbe();
    return true;
  };

  const scheduleReconnect = (): void => {
    if (closed || reconnectTimer || driver.kind !== 'postgres') return;
    // At least half the ceiling: a listener must not hammer a database that is down.
    const delay = Math.min(MAX_TIMER_MS, backoffDelay(attempt++, { baseMs: reconnectMinMs, capMs: reconnectMaxMs, jitter: 0.5 }));
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
      pglite.listen(LIVE_CHANNEL, (payload) => {
        notifications++;
        wake('notify', payload);
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

    status: () => ({ mode, listener, notifications, probesHeard, polls, reconnects, lastWakeAt, problem: listener === 'deaf' ? deafProblem : null }),

    async close() {
      if (closed) return;
      closed = true;
      if (pollTimer) clearTimeout(pollTimer);
      if (reconnectTimer) clearTimeout(reconnectTimer);
      pollTimer = reconnectTimer = undefined;
      forgetProbe();
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
