/**
 * fw's spans, on `@opentelemetry/api` alone: without a registered tracer provider every call here is
 * the API's no-op (no span recorded, nothing allocated beyond a non-recording span), so tracing costs
 * nothing until `startTelemetry` (start-telemetry.ts) registers one — `fw start` and `fw dev` do when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_TRACES_EXPORTER` is set.
 *
 * What spans carry is chosen here and nowhere else: names, kinds, counts, codes — never args, rows,
 * prompts, tool payloads or SQL parameter values (docs/observability.md).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import { type Attributes, type Context, context, INVALID_SPAN_CONTEXT, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import { isSuspension } from '../core/suspension.ts';
import { fwVersion } from '../core/version.ts';

export { SpanKind };
export type { Attributes, Span };

const tracer = trace.getTracer('fw', fwVersion);

// Off until startTelemetry registers a provider: then every helper below is a plain call of its
// callback, without even the API's no-op spans and contexts (bench/http measures the request path).
let active = false;
const notRecording: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Turns fw's spans on or off (start-telemetry.ts, when it registers or shuts down a provider). */
export function setTracingActive(on: boolean): void {
  active = on;
}

/** Runs `fn` in a new span (a child of the active one, or of `parent`), ending it when `fn` settles. */
export function inSpan<T>(name: string, options: { kind?: SpanKind; attributes?: Attributes; parent?: Context }, fn: (span: Span) => Promise<T>): Promise<T> {
  if (!active) return fn(notRecording);
  return tracer.startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, ...(options.attributes ? { attributes: options.attributes } : {}) }, options.parent ?? context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      // A workflow that sleeps, waits for a signal or stops on a cancel has not failed: its span says so instead.
      if (isSuspension(error)) span.setAttribute('fw.workflow.outcome', error.outcome);
      else failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Marks a span failed with the error's code (fw's, or the database's SQLSTATE) — not its message, which may quote data. */
export function failSpan(span: Span, error: unknown): void {
  const code = (error as { code?: unknown } | null)?.code;
  span.setStatus({ code: SpanStatusCode.ERROR, ...(typeof code === 'string' ? { message: code } : {}) });
  span.setAttribute('error.type', typeof code === 'string' ? code : error instanceof Error ? error.name : 'error');
}

/**
 * The span of one inbound HTTP request: a child of the caller's `traceparent` when it sent one (and a
 * provider is registered); else, with `adopt` (the caller's well-formed `x-fw-trace-id`), a trace of
 * that id — as it is when it is W3C-shaped (32 hex digits), derived from it otherwise and kept as
 * `fw.trace_id`; else a new trace. Run the handling inside `context` so its spans nest.
 */
export function startServerSpan(headers: IncomingHttpHeaders, name: string, attributes: Attributes, adopt?: string): { span: Span; context: Context } {
  if (!active) return { span: notRecording, context: ROOT_CONTEXT };
  let parent = propagation.extract(ROOT_CONTEXT, headers);
  if (adopt !== undefined && !trace.getSpanContext(parent)) {
    const traceId = W3C_TRACE_ID.test(adopt) ? adopt : createHash('sha256').update(adopt).digest('hex').slice(0, 32);
    parent = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: randomBytes(8).toString('hex'), traceFlags: TraceFlags.SAMPLED, isRemote: true });
    if (traceId !== adopt) attributes = { ...attributes, 'fw.trace_id': adopt };
  }
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** A W3C trace id: 32 lower-case hex digits, not all zero. */
const W3C_TRACE_ID = /^(?!0{32})[0-9a-f]{32}$/;

/** Ends a request's span with its status (5xx marks it failed, as OpenTelemetry's HTTP conventions say). */
export function endServerSpan(span: Span, status: number): void {
  if (span === notRecording) return;
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** Runs `fn` with `ctx` active. */
export function withContext<T>(ctx: Context, fn: () => T): T {
  return active ? context.with(ctx, fn) : fn();
}

/** Adds `traceparent` (and `tracestate`) for the active span to outgoing headers; nothing when tracing is off. */
export function injectTraceContext(headers: Record<string, string>): void {
  if (!active) return;
  propagation.inject(context.active(), headers);
}

/** A span recorded after the fact, from its measured duration (database statements, timed by Kysely); its ids. */
export function recordFinishedSpan(name: string, kind: SpanKind, durationMs: number, attributes: Attributes, error?: unknown): { traceId: string; spanId: string } {
  const now = performance.timeOrigin + performance.now();
  const span = tracer.startSpan(name, { kind, attributes, startTime: now - durationMs }, context.active());
  if (error !== undefined) failSpan(span, error);
  span.end(now);
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}

/** Whether the active span records (a traced request, rerun or delivery is running here). */
export function spanRecordingNow(): boolean {
  return active && (trace.getSpan(context.active())?.isRecording() ?? false);
}
