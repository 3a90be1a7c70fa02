import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';

/**
 * The last traces of this process, in memory, for the dashboard's Requests view (`fw dev`). A span
 * processor beside any exporter: bounded (RECENT_TRACES traces, SPANS_PER_TRACE spans each; the oldest
 * trace goes first), and only registered when `startTelemetry` is asked to keep them, so nothing of it
 * runs in `fw start`. Spans carry what docs/observability.md says they carry — no args, rows or users.
 */
export const RECENT_TRACES = 200;
const SPANS_PER_TRACE = 300;

export interface RecentSpan {
  spanId: string;
  parentId: string | null;
  name: string;
  kind: number;
  /** Milliseconds since the epoch, fractional. */
  start: number;
  durationMs: number;
  error: string | null;
  attributes: Record<string, string | number | boolean>;
}

export interface RecentTrace {
  traceId: string;
  start: number;
  spans: RecentSpan[];
  /** Who made the request (kept beside the spans, never on them: spans carry no user). */
  caller?: Caller;
}

export interface Caller {
  kind: string;
  userId: string | null;
  tenantId: string | null;
  role: string | null;
}

const traces = new Map<string, RecentTrace>();
const callers = new Map<string, Caller>();
let keeping = false;

/** On while `startTelemetry({ recent: true })` has the processor registered (fw dev); off, noteCaller does nothing. */
export function setKeepingRecentSpans(on: boolean): void {
  keeping = on;
  if (!on) callers.clear();
}

/** Remembers who made the request of `traceId`, for the dashboard's Requests view (fw dev only; bounded like the traces). */
export function noteCaller(traceId: string, caller: Caller): void {
  if (!keeping) return;
  callers.set(traceId, { kind: caller.kind, userId: caller.userId, tenantId: caller.tenantId, role: caller.role });
  if (callers.size > RECENT_TRACES * 2) callers.delete(callers.keys().next().value!);
}

function ms(time: readonly [number, number]): number {
  return time[0] * 1000 + time[1] / 1e6;
}

/** Keeps ended spans; the newest trace is the Map's last key. */
export const recentSpanProcessor: SpanProcessor = {
  onStart() {},
  onEnd(span: ReadableSpan) {
    const context = span.spanContext();
    let trace = traces.get(context.traceId);
    if (!trace) {
      trace = { traceId: context.traceId, start: ms(span.startTime), spans: [] };
      traces.set(context.traceId, trace);
      if (traces.size > RECENT_TRACES) traces.delete(traces.keys().next().value!);
    }
    // The dashboard's own polling (`/_fw/…`) is not what the developer looks for; a run from its
    // Functions view is (it has an entry span).
    const route = span.attributes['http.route'];
    if (!span.parentSpanContext && typeof route === 'string' && route.startsWith('/_fw/') && !trace.spans.some((s) => s.name.startsWith('fw.entry '))) {
      traces.delete(context.traceId);
      return;
    }
    if (trace.spans.length >= SPANS_PER_TRACE) return;
    const attributes: RecentSpan['attributes'] = {};
    for (const [key, value] of Object.entries(span.attributes)) {
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') attributes[key] = value;
    }
    const start = ms(span.startTime);
    trace.start = Math.min(trace.start, start);
    trace.spans.push({
      spanId: context.spanId,
      parentId: span.parentSpanContext?.spanId ?? null,
      name: span.name,
      kind: span.kind,
      start,
      durationMs: ms(span.duration),
      error: span.status.code === 2 ? (span.status.message ?? (typeof attributes['error.type'] === 'string' ? attributes['error.type'] : 'error')) : null,
      attributes,
    });
  },
  forceFlush: () => Promise.resolve(),
  shutdown() {
    traces.clear();
    callers.clear();
    return Promise.resolve();
  },
};

/** The kept traces, newest first, each with its spans in start order. */
export function recentTraces(): RecentTrace[] {
  return [...traces.values()].reverse().map((trace) => {
    const caller = callers.get(trace.traceId);
    return { ...trace, spans: [...trace.spans].sort((a, b) => a.start - b.start), ...(caller ? { caller } : {}) };
  });
}
