import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import { errorStatus } from '../core/error-codes.ts';
import { type Caller, type Failure, forgetNotes, type Invocation, notesOf, setKeepingTraceNotes } from './trace-notes.ts';

/**
 * The last traces of this process, in memory, for the dashboard's Requests view (`fw dev`). A span
 * processor beside any exporter, registered only when `startTelemetry` is asked to keep them, so nothing
 * of it runs in `fw start`. Spans carry what docs/observability.md says they carry — no args, rows or
 * users; what the dashboard shows beyond that is kept beside them (trace-notes.ts).
 *
 * A trace enters the buffer when its root span ends (a request answered, a delivery done), in one of
 * three buffers, so that no kind of traffic pushes another out: requests and deliveries that went well
 * (RECENT_TRACES), failed ones (RECENT_FAILED: a burst of good traffic does not lose the failure you are
 * looking for), and background traffic (RECENT_BACKGROUND: live streams and reruns, health checks). The
 * dashboard's own reads are never kept; its runs of an entry are.
 */
export const RECENT_TRACES = 200;
export const RECENT_FAILED = 300;
export const RECENT_BACKGROUND = 100;
const SPANS_PER_TRACE = 300;
/** Traces whose root has not ended yet (a live stream's lasts as long as the stream). */
const OPEN_TRACES = 500;

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

interface RecentTrace {
  traceId: string;
  start: number;
  spans: RecentSpan[];
}

export type { Caller };

/** What the Requests view lists of a trace. */
export interface TraceSummary {
  traceId: string;
  start: number;
  durationMs: number;
  /** The request line (`POST /commands/createNote`), `run createNote (dashboard)`, or the root span's name. */
  label: string;
  kind: 'request' | 'run' | 'delivery' | 'rerun' | 'other';
  /** Live streams and reruns, health checks: hidden unless asked for. */
  background: boolean;
  entry: string | null;
  /** The HTTP status the request answered (none for a dashboard run, which answers 200 whatever the entry did, nor for a delivery). */
  httpStatus: number | null;
  /** `waiting`: a workflow that sleeps or waits for a signal; `cancelled`: one that stopped on a cancel. */
  outcome: 'ok' | 'failed' | 'waiting' | 'cancelled';
  /** fw's error code of a failure (or a delivery's `retry`/`dead` when its cause has none). */
  code: string | null;
  /** The HTTP status class a failure's code answers: for the 4xx and 5xx filters. */
  status: number | null;
  /** The failure's message (fw dev keeps it beside the spans). */
  message: string | null;
  caller?: Caller;
  spanCount: number;
  /** The trace whose command emitted what this delivery delivers. */
  emittedBy: string | null;
}

export interface TraceDetail extends TraceSummary {
  spans: Array<RecentSpan & { sql?: string }>;
  failure: Failure | null;
  invocations: Invocation[];
  /** Deliveries of what this trace emitted, scheduled or started (their own traces). */
  caused: TraceSummary[];
}

type Bucket = 'requests' | 'failed' | 'background';
const open = new Map<string, RecentTrace>();
const kept: Record<Bucket, Map<string, RecentTrace>> = { requests: new Map(), failed: new Map(), background: new Map() };
const limits: Record<Bucket, number> = { requests: RECENT_TRACES, failed: RECENT_FAILED, background: RECENT_BACKGROUND };
let keeping = false;

/** On while `startTelemetry({ recent: true })` has the processor registered (fw dev): the notes beside the spans follow it. */
export function setKeepingRecentSpans(on: boolean): void {
  keeping = on;
  setKeepingTraceNotes(on);
}

function ms(time: readonly [number, number]): number {
  return time[0] * 1000 + time[1] / 1e6;
}

function findKept(traceId: string): RecentTrace | undefined {
  return kept.requests.get(traceId) ?? kept.failed.get(traceId) ?? kept.background.get(traceId);
}

function drop(map: Map<string, RecentTrace>, traceId: string): void {
  map.delete(traceId);
  forgetNotes(traceId);
}

/** Keeps ended spans; a trace is filed in its buffer when its root span ends. */
export const recentSpanProcessor: SpanProcessor = {
  onStart() {},
  onEnd(span: ReadableSpan) {
    if (!keeping) return;
    const context = span.spanContext();
    let trace = findKept(context.traceId) ?? open.get(context.traceId);
    if (!trace) {
      trace = { traceId: context.traceId, start: ms(span.startTime), spans: [] };
      open.set(context.traceId, trace);
      if (open.size > OPEN_TRACES) drop(open, open.keys().next().value!);
    }
    if (trace.spans.length < SPANS_PER_TRACE) {
      const attributes: RecentSpan['attributes'] = {};
      for (const [key, value] of Object.entries(span.attributes)) {
        if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') attributes[key] = value;
      }
      const start = ms(span.startTime);
      trace.start = Math.min(trace.start, start);
      trace.spans.push({
        spanId: context.spanId,
        parentId: span.parentSpanContext?.isRemote ? null : (span.parentSpanContext?.spanId ?? null),
        name: span.name,
        kind: span.kind,
        start,
        durationMs: ms(span.duration),
        error: span.status.code === 2 ? (span.status.message ?? (typeof attributes['error.type'] === 'string' ? attributes['error.type'] : 'error')) : null,
        attributes,
      });
    }
    // The root ended (no parent here, or the caller's across the wire): the trace is complete.
    if (open.get(context.traceId) === trace && (!span.parentSpanContext || span.parentSpanContext.isRemote)) {
      open.delete(context.traceId);
      const bucket = bucketOf(trace);
      if (!bucket) return forgetNotes(context.traceId);
      kept[bucket].set(context.traceId, trace);
      if (kept[bucket].size > limits[bucket]) drop(kept[bucket], kept[bucket].keys().next().value!);
    }
  },
  forceFlush: () => Promise.resolve(),
  shutdown() {
    for (const map of [open, ...Object.values(kept)]) {
      for (const traceId of map.keys()) forgetNotes(traceId);
      map.clear();
    }
    return Promise.resolve();
  },
};

const DASHBOARD_API_ROUTE = '/_fw/dashboard/api/*';

/** The trace's first span without a parent in it: the request (or the rerun, the delivery). */
function rootOf(trace: RecentTrace): RecentSpan | undefined {
  const ids = new Set(trace.spans.map((s) => s.spanId));
  return trace.spans.find((s) => !s.parentId || !ids.has(s.parentId));
}

function entrySpanOf(trace: RecentTrace): RecentSpan | undefined {
  return trace.spans.find((s) => typeof s.attributes['fw.entry'] === 'string' && /^fw\.(entry|action|workflow) /.test(s.name));
}

/** Where a complete trace is kept, or undefined for the dashboard's own reads (and fw's admin routes), which are not. */
function bucketOf(trace: RecentTrace): Bucket | undefined {
  const route = rootOf(trace)?.attributes['http.route'];
  if (typeof route === 'string' && route.startsWith('/_fw/') && !(route === DASHBOARD_API_ROUTE && entrySpanOf(trace))) return undefined;
  const summary = summarise(trace);
  return summary.background ? 'background' : summary.outcome === 'failed' ? 'failed' : 'requests';
}

function isBackground(root: RecentSpan | undefined): boolean {
  if (!root) return false;
  const route = root.attributes['http.route'];
  if (typeof route === 'string') return route === '/live' || route.startsWith('/live/') || route === '/health' || route === '/entries';
  return root.name.startsWith('fw.live.rerun ');
}

function statusOf(code: string): number | null {
  return Object.hasOwn(errorStatus, code) ? errorStatus[code as keyof typeof errorStatus] : null;
}

function summarise(trace: RecentTrace): TraceSummary {
  const root = rootOf(trace);
  const entry = entrySpanOf(trace);
  const notes = notesOf(trace.traceId);
  const route = root?.attributes['http.route'];
  const run = route === DASHBOARD_API_ROUTE && entry !== undefined;
  const delivery = trace.spans.find((s) => s.attributes['fw.outbox.outcome'] !== undefined || s.name.startsWith('fw.outbox.deliver '));
  const deliveryOutcome = delivery?.attributes['fw.outbox.outcome'];
  const httpCode = root?.attributes['http.response.status_code'];
  const httpStatus = typeof httpCode === 'number' && !run ? httpCode : null;
  const suspended = trace.spans.find((s) => s.attributes['fw.workflow.outcome'] !== undefined)?.attributes['fw.workflow.outcome'];
  const failure = notes?.failure;
  // What failed is decided by what answered: the HTTP status, the run's entry, the delivery's outcome —
  // not by any span inside (a statement whose error the handler caught failed nothing).
  const errorType = typeof root?.attributes['error.type'] === 'string' ? root.attributes['error.type'] : null;
  const code =
    failure?.code ??
    (httpStatus !== null
      ? httpStatus >= 400
        ? (errorType ?? `http_${httpStatus}`)
        : null
      : run
        ? entry.error
        : delivery
          ? deliveryOutcome === 'retry' || deliveryOutcome === 'dead'
            ? (entry?.error ?? trace.spans.find((s) => s.error)?.error ?? deliveryOutcome)
            : null
          : (root?.error ?? null));
  const failed = code !== null;
  const outcome = failed ? 'failed' : suspended === 'wait' || deliveryOutcome === 'wait' ? 'waiting' : suspended === 'cancelled' ? 'cancelled' : 'ok';
  const status = !failed ? null : (failure?.status ?? (httpStatus !== null && httpStatus >= 400 ? httpStatus : code ? (statusOf(code) ?? 500) : 500));
  const end = Math.max(...trace.spans.map((s) => s.start + s.durationMs));
  const emittedBy = delivery?.attributes['fw.emitted_by.trace_id'];
  return {
    traceId: trace.traceId,
    start: trace.start,
    durationMs: root?.durationMs ?? end - trace.start,
    label: run ? `run ${String(entry.attributes['fw.entry'])} (dashboard)` : (root?.name ?? trace.traceId),
    kind: run ? 'run' : delivery ? 'delivery' : typeof route === 'string' ? 'request' : root?.name.startsWith('fw.live.rerun ') ? 'rerun' : 'other',
    background: isBackground(root),
    entry: typeof entry?.attributes['fw.entry'] === 'string' ? entry.attributes['fw.entry'] : null,
    httpStatus,
    outcome,
    code,
    status,
    message: failed ? (failure?.message ?? null) : null,
    ...(notes?.caller ? { caller: notes.caller } : {}),
    spanCount: trace.spans.length,
    emittedBy: typeof emittedBy === 'string' ? emittedBy : null,
  };
}

function allKept(): RecentTrace[] {
  return [...kept.requests.values(), ...kept.failed.values(), ...kept.background.values()];
}

/** The kept traces, newest first. */
export function recentTraces(): TraceSummary[] {
  return allKept()
    .sort((a, b) => b.start - a.start)
    .map(summarise);
}

/** One kept trace with its spans in start order and what fw dev kept beside them; undefined when it is not kept. */
export function recentTrace(traceId: string): TraceDetail | undefined {
  const trace = findKept(traceId);
  if (!trace) return undefined;
  const notes = notesOf(traceId);
  const caused = allKept()
    .filter((t) => t.spans.some((s) => s.attributes['fw.emitted_by.trace_id'] === traceId))
    .sort((a, b) => a.start - b.start)
    .map(summarise);
  return {
    ...summarise(trace),
    spans: [...trace.spans].sort((a, b) => a.start - b.start).map((span) => {
      const text = notes?.statements.get(span.spanId);
      return text === undefined ? span : { ...span, sql: text };
    }),
    failure: notes?.failure ?? null,
    invocations: notes?.invocations ?? [],
    caused,
  };
}
