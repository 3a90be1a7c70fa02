import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { AppDefinition } from '../core/app-definition.ts';
import { printable } from '../core/printable.ts';
import type { FwDatabase } from '../db/database.ts';
import { type DeliveryResult, MAX_ERROR_LENGTH, type OutboxRow } from '../db/outbox.ts';
import { errorStatus } from '../core/error-codes.ts';
import { noteFailedExecution } from '../telemetry/recent-logs.ts';
import { activeTraceId, noteCaller, noteFailure } from '../telemetry/trace-notes.ts';
import { inSpan, SpanKind } from '../telemetry/tracing.ts';
import { type Backoff, backoffDelay, checkBackoff } from '../core/backoff.ts';
import type { Clock } from '../core/clock.ts';
import { claimRows, type DeliveryOutcome, finishDelivery, releaseLeases, renewLeases } from './store.ts';

/**
 * What the worker runs for a row: given by whoever assembled it (the actions listening for an event,
 * a workflow run), so the queue knows nothing of either.
 */
export interface RowDelivery {
  /** What runs for the row, by name (outcomes and logs). */
  names(row: OutboxRow): string[];
  deliver(row: OutboxRow): Promise<DeliveryResult>;
  /** After a failed attempt's outcome is written: `retrying`, or `failed` once the row is dead. */
  failed?(row: OutboxRow, status: 'retrying' | 'failed', error: string): Promise<void>;
  /** Before each claim, at `now` (epoch ms): rows to add first (the crons' next ticks). */
  beforeClaim?(now: number): Promise<void>;
}

/** How the worker claims, retries and gives up (every field has a default). */
export interface DeliveryWorkerSettings {
  /** Names this worker in `lease_owner` (default `host:pid:random`). */
  workerId?: string;
  /** Rows delivered at once (default 10): a claim takes at most this many minus those still running. */
  batchSize?: number;
  /** How long a claim holds a row (default 30 s), renewed while its actions run; a row whose worker died comes back after it. */
  leaseMs?: number;
  /** How often to look for due rows when the last look found fewer than it could take (default 1 s). */
  pollMs?: number;
  /** Attempts before a row is dead (default 8). */
  maxAttempts?: number;
  /** Retry delays: full jitter up to min(cap, base · 2^(attempt-1)) (defaults base 1 s, cap 5 min). */
  backoff?: Partial<Omit<Backoff, 'jitter'>>;
  /** Failures: of an action (with the row), or of the worker's own statements (default: stderr). */
  onError?: (error: unknown, context: OutboxErrorContext) => void;
  /** Every row's outcome, e.g. for logs. */
  onOutcome?: (outcome: OutboxOutcome) => void;
  /**
   * The time rows fall due by (scheduled calls, retries, sleeping workflow runs): tests pass one they
   * move forward, started ahead of the database's time (rows written without a time are due at the
   * database's `now()`). Default: the database's time. Leases always keep the database's time.
   */
  clock?: Clock;
}

export interface DeliveryWorkerOptions extends DeliveryWorkerSettings {
  app: AppDefinition;
  db: FwDatabase;
  /** What to run for a row of `app` (called again for every `setApp`). */
  deliveryFor: (app: AppDefinition) => RowDelivery;
}

export interface OutboxErrorContext {
  phase: 'claim' | 'renew' | 'release' | 'deliver' | 'finish';
  outboxId?: string;
  event?: string;
  action?: string;
  attempt?: number;
  traceId?: string | null;
}

export interface OutboxOutcome {
  /**
   * `lease-lost`: the lease expired and another worker took the row; this worker's outcome was dropped.
   * `wait`: the row sleeps until `resumeAt` (a workflow run's `ctx.sleep`), without counting an attempt.
   */
  kind: 'delivered' | 'retry' | 'wait' | 'dead' | 'lease-lost';
  outboxId: string;
  event: string;
  attempt: number;
  actions: string[];
  traceId: string | null;
  /** The failure (`retry`, `dead`) or the note (`delivered` without an action). */
  message?: string;
  /** `retry`: the wait before the row is due again. */
  delayMs?: number;
  /** `wait`: when the row is due again (ISO). */
  resumeAt?: string;
}

export interface OutboxRunSummary {
  claimed: number;
  delivered: number;
  retried: number;
  /** Rows put back to sleep (workflow runs waiting for a time). */
  waiting: number;
  dead: number;
  leaseLost: number;
}

export interface OutboxWorkerStatus extends OutboxRunSummary {
  workerId: string;
  state: 'idle' | 'running' | 'stopping' | 'stopped';
  inFlight: number;
  batchSize: number;
  leaseMs: number;
  pollMs: number;
  maxAttempts: number;
  lastClaimAt: string | null;
  lastError: string | null;
}

export interface OutboxWorker {
  readonly workerId: string;
  /** The app whose actions run from now on (dev reloads); deliveries already running finish with the old one. */
  setApp(app: AppDefinition): void;
  /** Polls every `pollMs` and delivers in the background. */
  start(): void;
  /**
   * Stops claiming. `releaseLeases` (default true): waits up to `graceMs` (default 10 s) for running
   * deliveries, then gives the rows still running back at once. `releaseLeases: false` returns at once
   * and abandons running deliveries, as a crash would: their rows come back when their leases expire.
   */
  stop(options?: { releaseLeases?: boolean; graceMs?: number }): Promise<void>;
  /** Claims one batch and delivers it, resolving when every row of it has an outcome (for tests and scripts). */
  runOnce(): Promise<OutboxRunSummary>;
  status(): OutboxWorkerStatus;
}

/**
 * The outbox's delivery loop: claims due rows (`_fw_outbox`) with a lease, runs what `deliveryFor`
 * says for each, and only then marks it `delivered`; a failure is retried with backoff until
 * `maxAttempts`, then the row is `dead` with its last error. At-least-once; any number of workers may
 * share one database. Apps get it assembled with their actions and workflows as `createOutboxWorker`.
 */
export function createDeliveryWorker(options: DeliveryWorkerOptions): OutboxWorker {
  const { db } = options;
  const workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const batchSize = wholeNumber('batchSize', options.batchSize ?? 10, 1);
  const leaseMs = wholeNumber('leaseMs', options.leaseMs ?? 30_000, 50);
  const pollMs = wholeNumber('pollMs', options.pollMs ?? 1000, 1);
  const maxAttempts = wholeNumber('maxAttempts', options.maxAttempts ?? 8, 1);
  const backoff = checkBackoff({ baseMs: 1000, capMs: 5 * 60_000, ...options.backoff }, 'createOutboxWorker({ backoff })');
  const onError = options.onError ?? reportToStderr;
  // Without an injected clock, rows fall due by the database's time (as every process sees it).
  const clock = options.clock;

  let delivery: RowDelivery;
  const setApp = (next: AppDefinition) => {
    delivery = options.deliveryFor(next);
  };
  setApp(options.app);

  let state: OutboxWorkerStatus['state'] = 'idle';
  let loopDone: Promise<void> = Promise.resolve();
  let wake: (() => void) | undefined;
  /** Deliveries running now, by row id. */
  const inFlight = new Map<string, Promise<OutboxOutcome['kind'] | undefined>>();
  /** Rows this worker gave up on while their actions ran: their outcomes are not written. */
  const abandoned = new Set<string>();
  let renewTimer: NodeJS.Timeout | undefined;
  const totals: OutboxRunSummary = { claimed: 0, delivered: 0, retried: 0, waiting: 0, dead: 0, leaseLost: 0 };
  let lastClaimAt: Date | null = null;
  let lastError: string | null = null;

  const report = (error: unknown, context: OutboxErrorContext) => {
    lastError = (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR_LENGTH);
    try {
      onError(error, context);
    } catch {
      // A failing error reporter must not stop deliveries.
    }
  };

  // Leases are renewed while actions run, so a slow model call keeps its row and only a dead worker loses it.
  const renewing = () => {
    const live = [...inFlight.keys()].filter((id) => !abandoned.has(id));
    if (live.length === 0) {
      clearInterval(renewTimer);
      renewTimer = undefined;
      return;
    }
    renewTimer ??= setInterval(() => {
      const ids = [...inFlight.keys()].filter((id) => !abandoned.has(id));
      if (ids.length === 0) return renewing();
      renewLeases(db.admin, workerId, ids, leaseMs).catch((error: unknown) => report(error, { phase: 'renew' }));
    }, Math.max(10, Math.floor(leaseMs / 3))).unref();
  };

  async function claim(limit: number): Promise<OutboxRow[]> {
    // What is due may include rows added now (a cron's tick): a failure here must not stop deliveries.
    await delivery.beforeClaim?.(clock?.now() ?? Date.now()).catch((error: unknown) => report(error, { phase: 'claim' }));
    const rows = await claimRows(db.admin, workerId, limit, leaseMs, clock ? new Date(clock.now()) : null);
    lastClaimAt = new Date();
    totals.claimed += rows.length;
    return rows;
  }

  function deliver(row: OutboxRow): Promise<OutboxOutcome['kind'] | undefined> {
    const attributes = { 'messaging.operation.type': 'process', 'fw.event': row.event, 'fw.outbox.attempt': row.attempts, ...(row.traceId ? { 'fw.emitted_by.trace_id': row.traceId } : {}) };
    return inSpan(`fw.outbox.deliver ${row.event}`, { kind: SpanKind.CONSUMER, attributes }, async (span) => {
      // fw dev's dashboard: who the delivery runs as (the caller who caused it), beside the spans.
      if (span.isRecording()) noteCaller(span.spanContext().traceId, { kind: row.callerKind ?? 'system', userId: row.userId, tenantId: row.tenantId, role: row.callerRole });
      const kind = await deliverTraced(row);
      if (kind) span.setAttribute('fw.outbox.outcome', kind);
      return kind;
    });
  }

  async function deliverTraced(row: OutboxRow): Promise<OutboxOutcome['kind'] | undefined> {
    const current = delivery;
    const names = current.names(row);
    const began = performance.now();
    let failureCode = 'internal';
    let outcome: DeliveryOutcome;
    let settled = false;
    if (row.attempts > maxAttempts) {
      // The last attempt's worker stopped mid-delivery (the lease expired): nothing is left to try.
      outcome = { kind: 'dead', error: `Attempt ${maxAttempts} of ${maxAttempts} did not finish: its worker stopped mid-delivery.` };
    } else {
      const result: DeliveryResult = await current.deliver(row).catch((error: unknown) => ({
        ok: false as const,
        permanent: false,
        action: '(worker)',
        error,
        message: (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR_LENGTH),
      }));
      if (result.ok && result.resumeAt !== undefined) outcome = { kind: 'wait', availableAt: new Date(result.resumeAt) };
      else if (result.ok) outcome = { kind: 'delivered', ...(result.note ? { note: result.note } : {}) };
      else {
        failureCode = errorCode(result.error);
        report(result.error, { phase: 'deliver', outboxId: row.id, event: row.event, action: result.action, attempt: row.attempts, traceId: row.traceId });
        const delayMs = backoffDelay(row.attempts - 1, backoff);
        outcome =
          result.permanent || row.attempts >= maxAttempts
            ? { kind: 'dead', error: result.message }
            : { kind: 'retry', error: result.message, delayMs, availableAt: clock ? new Date(clock.now() + delayMs) : null };
      }
      settled = result.ok && result.settled === true;
    }
    if (abandoned.has(row.id)) return undefined;
    let written: boolean;
    try {
      // A delivery that settled its row in its own transaction (a scheduled command) has nothing left to write.
      written = settled || (await finishDelivery(db.admin, workerId, row.id, outcome));
    } catch (error) {
      report(error, { phase: 'finish', outboxId: row.id, event: row.event, attempt: row.attempts, traceId: row.traceId });
      return undefined; // The lease runs out and the row is delivered again.
    }
    if (written && (outcome.kind === 'retry' || outcome.kind === 'dead') && current.failed) {
      await current.failed(row, outcome.kind === 'retry' ? 'retrying' : 'failed', outcome.error).catch((error: unknown) =>
        report(error, { phase: 'finish', outboxId: row.id, event: row.event, attempt: row.attempts, traceId: row.traceId }),
      );
    }
    if (written && (outcome.kind === 'retry' || outcome.kind === 'dead')) noteDeliveryFailure(row, names, outcome, failureCode, performance.now() - began);
    const kind = written ? outcome.kind : 'lease-lost';
    totals[kind === 'delivered' ? 'delivered' : kind === 'retry' ? 'retried' : kind === 'wait' ? 'waiting' : kind === 'dead' ? 'dead' : 'leaseLost']++;
    const message = outcome.kind === 'delivered' ? outcome.note : outcome.kind === 'wait' ? undefined : outcome.error;
    options.onOutcome?.({
      kind,
      outboxId: row.id,
      event: row.event,
      attempt: row.attempts,
      actions: names,
      traceId: row.traceId,
      ...(message ? { message } : {}),
      ...(outcome.kind === 'retry' && written ? { delayMs: outcome.delayMs } : {}),
      ...(outcome.kind === 'wait' && written ? { resumeAt: outcome.availableAt.toISOString() } : {}),
    });
    return kind;
  }

  function track(row: OutboxRow): Promise<OutboxOutcome['kind'] | undefined> {
    const atCapacity = () => inFlight.size >= batchSize;
    const running = deliver(row).finally(() => {
      const wasFull = atCapacity();
      inFlight.delete(row.id);
      abandoned.delete(row.id);
      renewing();
      if (wasFull) wake?.();
    });
    inFlight.set(row.id, running);
    renewing();
    return running;
  }

  async function loop(): Promise<void> {
    while (state === 'running') {
      const capacity = batchSize - inFlight.size;
      let claimed = 0;
      if (capacity > 0) {
        try {
          const rows = await claim(capacity);
          claimed = rows.length;
          for (const row of rows) void track(row);
        } catch (error) {
          report(error, { phase: 'claim' });
        }
      }
      if (state !== 'running') break;
      // A full batch means more rows may be due: look again at once instead of sleeping.
      if (capacity > 0 && claimed === capacity) {
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs);
        function done() {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        }
        wake = done;
      });
    }
  }

  return {
    workerId,
    setApp,
    start() {
      if (state === 'running') return;
      state = 'running';
      loopDone = loop();
    },
    async stop({ releaseLeases: release = true, graceMs = 10_000 } = {}) {
      if (state === 'running') state = 'stopping';
      wake?.();
      await loopDone;
      if (release && inFlight.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.allSettled(inFlight.values()),
          new Promise((resolve) => {
            timer = setTimeout(resolve, graceMs);
          }),
        ]);
        clearTimeout(timer);
      }
      const left = [...inFlight.keys()];
      for (const id of left) abandoned.add(id);
      renewing();
      if (release) await releaseLeases(db.admin, workerId, left).catch((error: unknown) => report(error, { phase: 'release' }));
      state = 'stopped';
    },
    async runOnce() {
      const rows = await claim(batchSize);
      const kinds = await Promise.all(rows.map(track));
      const count = (kind: OutboxOutcome['kind']) => kinds.filter((k) => k === kind).length;
      return { claimed: rows.length, delivered: count('delivered'), retried: count('retry'), waiting: count('wait'), dead: count('dead'), leaseLost: count('lease-lost') };
    },
    status() {
      return {
        workerId,
        state,
        inFlight: inFlight.size,
        batchSize,
        leaseMs,
        pollMs,
        maxAttempts,
        ...totals,
        lastClaimAt: lastClaimAt?.toISOString() ?? null,
        lastError,
      };
    },
  };
}

function wholeNumber(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) throw new TypeError(`fw: createOutboxWorker({ ${name} }) must be a whole number ≥ ${min}, got ${value}.`);
  return value;
}

function reportToStderr(error: unknown, context: OutboxErrorContext): void {
  const message = error instanceof Error ? error.message : String(error);
  const where =
    context.phase === 'deliver'
      ? `action ${context.action} failed on event "${context.event}" (outbox #${context.outboxId}, attempt ${context.attempt}, trace ${context.traceId ?? '–'})`
      : `outbox worker: ${context.phase} failed${context.outboxId ? ` (outbox #${context.outboxId})` : ''}`;
  console.error(`fw: ${where}: ${printable(message)}`);
}

/** fw's code of what a delivery threw (the cause an action's failure wraps), else `internal`. */
function errorCode(error: unknown): string {
  for (let current = error, depth = 0; current && depth < 3; current = (current as { cause?: unknown }).cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && Object.hasOwn(errorStatus, code)) return code;
  }
  return 'internal';
}

/** fw dev's dashboard: a failed delivery beside its trace, and its line in Logs. */
function noteDeliveryFailure(row: OutboxRow, names: string[], outcome: DeliveryOutcome & { kind: 'retry' | 'dead' }, code: string, durationMs: number): void {
  const traceId = activeTraceId();
  if (!traceId) return;
  const status = errorStatus[code as keyof typeof errorStatus] ?? 500;
  noteFailure(traceId, { code, status, message: outcome.error });
  const then = outcome.kind === 'dead' ? 'dead-lettered' : `retried in ${Math.max(1, Math.round(outcome.delayMs / 1000))} s`;
  noteFailedExecution({
    what: `${row.event}${names.length ? ` (${names.join(', ')})` : ''}, attempt ${row.attempts}`,
    outcome: `${code}, ${then}`,
    level: outcome.kind === 'dead' ? 'error' : 'warn',
    durationMs,
    message: outcome.error,
    traceId,
  });
}
