import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECENT_BACKGROUND, RECENT_TRACES, recentSpanProcessor, recentTrace, recentTraces, setKeepingRecentSpans } from './recent-spans.ts';
import { noteFailure } from './trace-notes.ts';

// fw dev's buffer of recent traces, fed by OpenTelemetry's own SDK: what is kept, where, and what never pushes anything out.
describe('the recent traces', () => {
  const provider = new TracerProvider({ spanProcessors: [recentSpanProcessor] });
  const tracer = provider.getTracer('test');
  beforeAll(() => setKeepingRecentSpans(true));
  afterAll(async () => {
    setKeepingRecentSpans(false);
    await provider.shutdown();
  });

  async function traced(route: string, status: number, error?: string): Promise<string> {
    const api = await import('@opentelemetry/api');
    const root = tracer.startSpan(`POST ${route}`, { kind: SpanKind.SERVER, attributes: { 'http.route': route } });
    const inside = api.trace.setSpan(api.ROOT_CONTEXT, root);
    const entry = tracer.startSpan('fw.entry createNote', { attributes: { 'fw.entry': 'createNote', 'fw.entry.kind': 'command', 'fw.policy': 'user' } }, inside);
    if (error) entry.setStatus({ code: SpanStatusCode.ERROR, message: error });
    tracer.startSpan('INSERT notes', { kind: SpanKind.CLIENT }, api.trace.setSpan(inside, entry)).end();
    entry.end();
    // Not listed until its root ends.
    expect(recentTraces().some((t) => t.traceId === root.spanContext().traceId)).toBe(false);
    root.setAttribute('http.response.status_code', status);
    if (error) root.setAttribute('error.type', error);
    root.end();
    return root.spanContext().traceId;
  }

  it('keeps a failure apart, so a flood of good requests does not push it out; the dashboard’s reads push out nothing', async () => {
    const failed = await traced('/commands/createNote', 400, 'validation_failed');
    noteFailure(failed, { code: 'validation_failed', status: 400, message: 'Invalid args: args.title: Too small' });
    for (let i = 0; i < RECENT_TRACES + 50; i++) await traced('/commands/createNote', 200);
    const kept = recentTraces();
    expect(kept.filter((t) => t.outcome === 'ok')).toHaveLength(RECENT_TRACES);
    expect(kept.find((t) => t.traceId === failed)).toMatchObject({ outcome: 'failed', code: 'validation_failed', status: 400, httpStatus: 400, message: 'Invalid args: args.title: Too small', label: 'POST /commands/createNote', entry: 'createNote' });
    expect(recentTrace(failed)!.failure).toEqual({ code: 'validation_failed', status: 400, message: 'Invalid args: args.title: Too small' });

    const newest = kept[0]!.traceId;
    for (let i = 0; i < 300; i++) await traced('/_fw/outbox', 200).then(() => undefined);
    for (let i = 0; i < RECENT_BACKGROUND + 20; i++) await traced('/live/liveNotes', 200);
    const after = recentTraces();
    expect(after.filter((t) => !t.background && t.outcome === 'ok')).toHaveLength(RECENT_TRACES);
    expect(after.find((t) => !t.background)!.traceId).toBe(newest);
    expect(after.filter((t) => t.background)).toHaveLength(RECENT_BACKGROUND);
    expect(after.some((t) => t.label.startsWith('POST /_fw/'))).toBe(false);
  });

  it('calls a workflow that waits waiting, not failed', async () => {
    const api = await import('@opentelemetry/api');
    const root = tracer.startSpan('fw.outbox.deliver fw.workflow:nap', { kind: SpanKind.CONSUMER, attributes: { 'fw.event': 'fw.workflow:nap' } });
    const run = tracer.startSpan('fw.workflow nap', { attributes: { 'fw.entry': 'nap', 'fw.entry.kind': 'workflow', 'fw.workflow.outcome': 'wait' } }, api.trace.setSpan(api.ROOT_CONTEXT, root));
    run.end();
    root.setAttribute('fw.outbox.outcome', 'wait');
    root.end();
    expect(recentTraces().find((t) => t.traceId === root.spanContext().traceId)).toMatchObject({ kind: 'delivery', outcome: 'waiting', code: null, status: null, entry: 'nap' });
  });
});
