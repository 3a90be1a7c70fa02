import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, type RunningFw, startFw } from './support/app.ts';
import { openEventStream } from './support/live-server.ts';
import { createTestPostgresDatabase, testDatabaseUrl } from './support/postgres.ts';
import { until } from './support/until.ts';

/** A span as OTLP/HTTP JSON carries it, attributes flattened. */
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status?: { code?: number };
}

/** A metric data point as OTLP/HTTP JSON carries it, attributes flattened. */
interface ReceivedPoint {
  metric: string;
  attributes: Record<string, unknown>;
  /** Sums and gauges: the value; histograms: the count. */
  value: number;
}

/** The smallest OTLP/HTTP receiver: POST /v1/traces and /v1/metrics with JSON, kept in arrival order. */
async function startReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; points: ReceivedPoint[]; bodies: string[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/metrics' && String(req.headers['content-type']).startsWith('application/json')) {
        bodies.push(body);
        const parsed = JSON.parse(body) as { resourceMetrics?: Array<{ scopeMetrics?: Array<{ metrics?: any[] }> }> };
        for (const resource of parsed.resourceMetrics ?? []) {
          for (const scope of resource.scopeMetrics ?? []) {
            for (const metric of scope.metrics ?? []) {
              const data = metric.histogram ?? metric.sum ?? metric.gauge;
              for (const point of data?.dataPoints ?? []) {
                const value = metric.histogram ? Number(point.count) : Number(point.asInt ?? point.asDouble ?? 0);
                points.push({ metric: metric.name, value, attributes: Object.fromEntries((point.attributes ?? []).map((a: any) => [a.key, valueOf(a.value)])) });
              }
            }
          }
        }
      }
      if (req.method === 'POST' && req.url === '/v1/traces' && String(req.headers['content-type']).startsWith('application/json')) {
        bodies.push(body);
        const parsed = JSON.parse(body) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: any[] }> }> };
        for (const resource of parsed.resourceSpans ?? []) {
          for (const scope of resource.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({ ...span, parentSpanId: span.parentSpanId ?? '', attributes: Object.fromEntries((span.attributes ?? []).map((a: any) => [a.key, valueOf(a.value)])) });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  const url = await listen(server);
  return { url, spans, points, bodies, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function valueOf(value: Record<string, unknown>): unknown {
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('boolValue' in value) return value.boolValue;
  if ('doubleValue' in value) return value.doubleValue;
  if ('arrayValue' in value) return ((value.arrayValue as { values?: Array<Record<string, unknown>> }).values ?? []).map(valueOf);
  return value;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe.skipIf(!testDatabaseUrl)('OpenTelemetry spans and metrics from fw dev on PostgreSQL, to a real OTLP/HTTP receiver', () => {
  const tenant = randomUUID();
  const plantedUser = `planted-user-${randomBytes(6).toString('hex')}`;
  const plantedTitle = `planted-title-${randomBytes(6).toString('hex')}`;
  const plantedWord = `planted-word-${randomBytes(6).toString('hex')}`;
  const plantedSecret = `planted-secret-${randomBytes(12).toString('hex')}`;
  const devAuth = { 'x-fw-user-id': plantedUser, 'x-fw-tenant-id': tenant, 'x-fw-role': 'member' };
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let service: { url: string; seen: IncomingHttpHeaders[]; close(): Promise<void> };
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw;
  let url: string;
  let database: Awaited<ReturnType<typeof createTestPostgresDatabase>>;

  /** The spans of one trace, once `expected` names have all arrived. */
  const traceOf = (traceId: string, expected: string[]) =>
    until(async () => {
      const spans = receiver.spans.filter((s) => s.traceId === traceId);
      return expected.every((name) => spans.some((s) => s.name === name)) ? spans : undefined;
    }, `spans ${expected.join(', ')} of trace ${traceId}`);
  const one = (spans: ReceivedSpan[], name: string) => {
    const found = spans.filter((s) => s.name === name);
    expect(found, name).toHaveLength(1);
    return found[0]!;
  };

  beforeAll(async () => {
    receiver = await startReceiver();
    // An external service over HTTP that answers `ping` and keeps the headers it was called with.
    const seen: IncomingHttpHeaders[] = [];
    const external = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, result: { pong: true } }));
      });
    });
    service = { url: await listen(external), seen, close: () => new Promise((resolve) => external.close(() => resolve())) };
    const manifest = {
      fwProtocol: '1.0',
      service: { name: 'svc', transport: 'http', baseUrl: service.url, forwardAuthorization: true },
      entries: [{ name: 'ping', kind: 'query', path: '/queries/ping', policy: 'user', transaction: 'read-only', risk: 'read', needsApproval: false, tenantScoped: true }],
    };
    app = await createTestApp('minimal-web', { 'fw.manifest.json': JSON.stringify(manifest, null, 2) });
    database = await createTestPostgresDatabase();
    dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], {
      cwd: app.dir,
      env: { DATABASE_URL: database.url, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_METRIC_EXPORT_INTERVAL: '200', OTEL_SERVICE_NAME: 'fw-telemetry-test' },
    });
    url = dev.ready.serverUrl as string;
  }, 120_000);

  afterAll(async () => {
    await dev?.stop();
    await database?.drop();
    await app?.remove();
    await service?.close();
    await receiver?.close();
  });

  it('a command continues the caller\'s trace: request → entry → statement, and x-fw-trace-id is the trace id', async () => {
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const created = await post(url, '/commands/createNote', { title: plantedTitle }, { ...devAuth, traceparent: `00-${traceId}-${callerSpan}-01` });
    expect(created.status).toBe(200);
    expect(created.headers.get('x-fw-trace-id')).toBe(traceId);
    expect(created.body.traceId).toBe(traceId);

    const spans = await traceOf(traceId, ['POST /commands/createNote', 'fw.entry createNote', 'INSERT notes']);
    const request = one(spans, 'POST /commands/createNote');
    expect(request).toMatchObject({ parentSpanId: callerSpan, kind: 2, attributes: { 'http.request.method': 'POST', 'http.route': '/commands/createNote', 'http.response.status_code': 200 } });
    const entry = one(spans, 'fw.entry createNote');
    expect(entry).toMatchObject({ parentSpanId: request.spanId, attributes: { 'fw.entry': 'createNote', 'fw.entry.kind': 'command', 'fw.policy': 'user' } });
    expect(entry.attributes).not.toHaveProperty('fw.tenant_id');
    const insert = one(spans, 'INSERT notes');
    expect(insert).toMatchObject({ parentSpanId: entry.spanId, kind: 3, attributes: { 'db.system.name': 'postgresql', 'db.operation.name': 'INSERT', 'db.collection.name': 'notes' } });
    expect(insert.attributes['db.query.text']).toMatch(/^insert into "notes" \(.*\) values \(\$1, \$2/);
  });

  it('a well-formed x-fw-trace-id without traceparent is echoed and is the trace’s id (a W3C one as it is, another kept as fw.trace_id)', async () => {
    const w3c = randomBytes(16).toString('hex');
    const first = await post(url, '/commands/createNote', { title: 'traced by id' }, { ...devAuth, 'x-fw-trace-id': w3c });
    expect(first.headers.get('x-fw-trace-id')).toBe(w3c);
    expect(first.body.traceId).toBe(w3c);
    expect(one(await traceOf(w3c, ['POST /commands/createNote']), 'POST /commands/createNote').parentSpanId).toEqual(expect.any(String));

    const own = `order-${randomBytes(6).toString('hex')}`;
    const second = await post(url, '/queries/listNotes', {}, { ...devAuth, 'x-fw-trace-id': own });
    expect(second.headers.get('x-fw-trace-id')).toBe(own);
    expect(second.body.traceId).toBe(own);
  });

  it('a live rerun after a write is a span of its own: the liveQuery, its rows, whether it changed', async () => {
    const stream = await openEventStream(`${url}/live/liveNotes`, { headers: devAuth });
    try {
      const before = (await stream.next()).json.result.length as number;
      const created = await post(url, '/commands/createNote', { title: `${plantedTitle}-2` }, devAuth);
      expect(created.status).toBe(200);
      await stream.nextWhere((event) => event.json.result?.length === before + 1);
      const rerun = await until(
        async () => receiver.spans.find((s) => s.name === 'fw.live.rerun liveNotes' && s.attributes['fw.live.changed'] === true && s.attributes['fw.live.rows'] === before + 1),
        'the rerun span',
      );
      expect(rerun.attributes).toMatchObject({ 'fw.live.query': 'liveNotes', 'fw.live.subscribers': 1 });
      // Its statements are its children.
      await until(async () => receiver.spans.some((s) => s.parentSpanId === rerun.spanId && s.attributes['db.operation.name'] === 'SELECT'), 'the rerun\'s SELECT');
    } finally {
      stream.close();
    }
  });

  it('an agent run: the model call and the tool call with its entry, in the request\'s trace, without prompt or payload', async () => {
    const response = await fetch(`${url}/ai/agents/run`, { method: 'POST', headers: { 'content-type': 'application/json', ...devAuth }, body: JSON.stringify({ agent: 'assistant', prompt: 'call listNotes' }) });
    expect(response.status).toBe(200);
    const traceId = response.headers.get('x-fw-trace-id')!;
    const spans = await traceOf(traceId, ['POST /ai/agents/run', 'fw.ai.tool listNotes', 'fw.entry listNotes']);
    const request = one(spans, 'POST /ai/agents/run');
    const model = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat');
    expect(model.length).toBeGreaterThanOrEqual(2); // the call that asks for the tool, the one that answers
    for (const call of model) expect(call.attributes).toMatchObject({ 'gen_ai.provider.name': 'mock', 'gen_ai.request.model': expect.any(String) });
    const tool = one(spans, 'fw.ai.tool listNotes');
    expect(tool.attributes).toEqual({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'listNotes', 'fw.ai.tool.kind': 'query', 'fw.ai.approval': 'not_required' });
    expect(one(spans, 'fw.entry listNotes').parentSpanId).toBe(tool.spanId);
    // Everything hangs under the request.
    const ids = new Set(spans.map((s) => s.spanId));
    for (const span of spans) if (span !== request) expect(ids.has(span.parentSpanId), span.name).toBe(true);
  });

  it('an external call carries traceparent to the service, whose parent is the call\'s span', async () => {
    const called = await post(url, '/external/svc/queries/ping', { word: plantedWord }, devAuth);
    expect(called.status, JSON.stringify(called.body)).toBe(200);
    const traceId = called.headers.get('x-fw-trace-id')!;
    const spans = await traceOf(traceId, ['POST /external/:service/queries/:name', 'fw.external svc.ping']);
    const external = one(spans, 'fw.external svc.ping');
    expect(external).toMatchObject({ kind: 3, parentSpanId: one(spans, 'POST /external/:service/queries/:name').spanId, attributes: { 'fw.external.service': 'svc', 'fw.external.entry': 'ping', 'fw.external.transport': 'http' } });
    expect(service.seen.at(-1)?.traceparent).toBe(`00-${traceId}-${external.spanId}-01`);
  });

  it('metrics: requests by route and status, live reruns and lag, live and outbox gauges, database pools', async () => {
    const stream = await openEventStream(`${url}/live/liveNotes`, { headers: devAuth });
    try {
      const before = (await stream.next()).json.result.length as number;
      expect((await post(url, '/commands/createNote', { title: `${plantedTitle}-m` }, devAuth)).status).toBe(200);
      await stream.nextWhere((event) => event.json.result?.length === before + 1);
      expect((await post(url, '/commands/createNote', { title: '' }, devAuth)).status).toBe(400);
      const point = (metric: string, match: Record<string, unknown>, accept: (value: number) => boolean) =>
        until(
          async () => receiver.points.findLast((p) => p.metric === metric && Object.entries(match).every(([k, v]) => p.attributes[k] === v) && accept(p.value)),
          `${metric} ${JSON.stringify(match)}`,
        );
      await point('http.server.request.duration', { 'http.route': '/commands/createNote', 'http.request.method': 'POST', 'http.response.status_code': 200 }, (count) => count >= 1);
      await point('http.server.request.duration', { 'http.route': '/commands/createNote', 'http.response.status_code': 400, 'error.type': 'validation_failed' }, (count) => count >= 1);
      await point('fw.live.reruns', { 'fw.live.query': 'liveNotes', 'fw.live.changed': true }, (n) => n >= 1);
      await point('fw.live.lag', { 'fw.live.query': 'liveNotes' }, (count) => count >= 1);
      // Gauges read at collection time, while the stream is open.
      await point('fw.live.subscriptions', {}, (n) => n >= 1);
      await point('fw.live.connections', {}, (n) => n >= 1);
      await point('fw.live.groups', {}, (n) => n >= 1);
      await point('fw.outbox.pending', {}, (n) => n >= 0);
      await point('fw.outbox.oldest_pending_age', {}, (s) => s >= 0);
      await point('fw.db.pool.connections', { 'fw.db.pool': 'requests', state: 'idle' }, (n) => n >= 1);
      await point('fw.db.pool.connections', { 'fw.db.pool': 'owner', state: 'waiting' }, (n) => n === 0);
    } finally {
      stream.close();
    }
  });

  it('no span or metric carries an args value, a forwarded secret, the caller\'s user or tenant, or the identity proof', async () => {
    const created = await post(url, '/commands/createNote', { title: `${plantedTitle}-3` }, devAuth);
    // A credential the caller forwards to the service: it reaches the service, and no span.
    const called = await post(url, '/external/svc/queries/ping', { word: `${plantedWord}-3` }, { ...devAuth, authorization: `Bearer ${plantedSecret}` });
    expect([created.status, called.status]).toEqual([200, 200]);
    expect(service.seen.at(-1)?.authorization).toBe(`Bearer ${plantedSecret}`);
    await traceOf(created.headers.get('x-fw-trace-id')!, ['POST /commands/createNote', 'fw.entry createNote', 'INSERT notes']);
    await traceOf(called.headers.get('x-fw-trace-id')!, ['POST /external/:service/queries/:name', 'fw.external svc.ping']);
    const everything = receiver.bodies.join('\n');
    for (const planted of [plantedTitle, plantedUser, plantedWord, plantedSecret, tenant, 'fw.identity']) expect(everything, planted).not.toContain(planted);
    expect(receiver.spans.every((s) => !JSON.stringify(s.attributes).includes('set_config'))).toBe(true);
  });
});
