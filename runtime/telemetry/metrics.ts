/**
 * fw's metrics, on `@opentelemetry/api` alone like its spans (tracing.ts): instruments are the API's
 * made when `startTelemetry` registers a meter provider (and registerRuntimeGauges must come after it), and
 * with metrics off every recording here is one check of a variable.
 *
 * | metric | kind | attributes |
 * | --- | --- | --- |
 * | `http.server.request.duration` (s) | histogram | `http.request.method`, `http.route`, `http.response.status_code`, `error.type` |
 * | `fw.live.reruns` | counter | `fw.live.query`, `fw.live.changed` |
 * | `fw.live.lag` (s) | histogram | `fw.live.query` — from the write's log row to the frame sent |
 * | `fw.live.connections`, `fw.live.subscriptions`, `fw.live.groups` | gauges | |
 * | `fw.outbox.pending`, `fw.outbox.oldest_pending_age` (s) | gauges | due rows, and how long the oldest has been due |
 * | `fw.outbox.scheduled` | gauge | rows not due yet: scheduled calls, cron ticks, sleeping workflow runs |
 * | `fw.db.pool.connections` | gauge | `fw.db.pool` (`owner`, `requests`), `state` (`used`, `idle`, `waiting`) |
 */
import { type Attributes, metrics } from '@opentelemetry/api';
import { fwVersion } from '../core/version.ts';

// OpenTelemetry's metrics API has no proxy meter: a meter taken before a provider is registered stays a
// no-op. So the meter and instruments are made when recording is turned on.
let instruments: ReturnType<typeof createInstruments> | undefined;

function createInstruments() {
  const meter = metrics.getMeter('fw', fwVersion);
  return {
    meter,
    requestDuration: meter.createHistogram('http.server.request.duration', {
      unit: 's',
      description: 'Duration of HTTP requests, by route and status.',
      advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10] },
    }),
    liveReruns: meter.createCounter('fw.live.reruns', { description: 'liveQuery group reruns, by liveQuery and whether the result changed.' }),
    liveLag: meter.createHistogram('fw.live.lag', {
      unit: 's',
      description: 'From a write (its row in the invalidation log) to the frame that shows it.',
      advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] },
    }),
  };
}

/** Turns fw's metric recording on (after start-telemetry.ts registered a meter provider) or off. */
export function setMetricsActive(on: boolean): void {
  instruments = on ? createInstruments() : undefined;
}

/** One answered request (not a live stream's: those last as long as the subscription). */
export function recordRequest(durationMs: number, attributes: Attributes): void {
  instruments?.requestDuration.record(durationMs / 1000, attributes);
}

/** One group rerun, and for a changed result sent on after writes, the write's age when its frame left. */
export function recordRerun(query: string, changed: boolean, writtenAtMs: number | undefined): void {
  if (!instruments) return;
  instruments.liveReruns.add(1, { 'fw.live.query': query, 'fw.live.changed': changed });
  if (changed && writtenAtMs !== undefined) instruments.liveLag.record(Math.max(0, Date.now() - writtenAtMs) / 1000, { 'fw.live.query': query });
}

/** What the gauges read of one runtime, each time the exporter collects (given by whoever assembled it). */
export interface GaugeSources {
  /** The database's pools. */
  pools(): ReadonlyArray<{ pool: string; used: number; idle: number; waiting: number }>;
  /** The live hub, where the process serves live queries. */
  live?: { status(): { connections: number; subscriptions: number; groups: number } };
  /** The outbox: rows due, rows scheduled for later, and since when the oldest due row is due (ISO 8601); undefined when it cannot tell now. */
  outbox(): Promise<{ pending: number; scheduled?: number; oldestPendingAt: string | null } | undefined>;
}

/**
 * Registers the gauges of one runtime (its live hub, outbox and pools); returns the function that
 * removes them (when the runtime closes). A source that fails to answer skips that collection.
 */
export function registerRuntimeGauges(runtime: GaugeSources): () => void {
  if (!instruments) return () => {};
  const { meter } = instruments;
  const connections = meter.createObservableGauge('fw.live.connections', { description: 'Open live streams.' });
  const subscriptions = meter.createObservableGauge('fw.live.subscriptions', { description: 'Live subscriptions.' });
  const groups = meter.createObservableGauge('fw.live.groups', { description: 'liveQuery groups (one query run serves every subscriber of a group).' });
  const pending = meter.createObservableGauge('fw.outbox.pending', { description: 'Outbox rows due for delivery.' });
  const scheduled = meter.createObservableGauge('fw.outbox.scheduled', { description: 'Outbox rows not due yet: scheduled calls, cron ticks, sleeping workflow runs.' });
  const oldest = meter.createObservableGauge('fw.outbox.oldest_pending_age', { unit: 's', description: 'How long the oldest due outbox row has been due.' });
  const pool = meter.createObservableGauge('fw.db.pool.connections', { description: 'Database connections by pool and state.' });
  const observables = [connections, subscriptions, groups, pending, scheduled, oldest, pool];
  const callback = async (result: { observe(observable: (typeof observables)[number], value: number, attributes?: Attributes): void }) => {
    const live = runtime.live?.status();
    if (live) {
      result.observe(connections, live.connections);
      result.observe(subscriptions, live.subscriptions);
      result.observe(groups, live.groups);
    }
    for (const p of runtime.pools()) {
      for (const state of ['used', 'idle', 'waiting'] as const) result.observe(pool, p[state], { 'fw.db.pool': p.pool, state });
    }
    const outbox = await runtime.outbox().catch(() => undefined);
    if (outbox) {
      result.observe(pending, outbox.pending);
      if (outbox.scheduled !== undefined) result.observe(scheduled, outbox.scheduled);
      const since = outbox.oldestPendingAt ? Date.parse(outbox.oldestPendingAt) : Date.now();
      result.observe(oldest, Math.max(0, Date.now() - since) / 1000);
    }
  };
  meter.addBatchObservableCallback(callback, observables);
  return () => meter.removeBatchObservableCallback(callback, observables);
}
