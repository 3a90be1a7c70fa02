import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Auth } from '../core/entry-types.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { defineSchema } from '../core/schema.ts';
import type { Manifest } from '../core/external-manifest.ts';
import { createDatabase, type FwDatabase } from '../db/database.ts';
import { createRuntimeHandler } from '../http/handler.ts';
import { callExternalEntry } from './services.ts';
import { type ExternalService } from '../core/app-definition.ts';

// The caller's bearer token is valid against fw itself: it reaches an external service only when the
// service's manifest asks for it.
describe('Authorization forwarding to http services', () => {
  let server: Server;
  let baseUrl: string;
  const seen: IncomingHttpHeaders[] = [];
  const auth: Auth = { kind: 'user', userId: 'ann', tenantId: '00000000-0000-4000-8000-0000000000a1', role: null };

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"result":{"echoed":true}}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server?.close());

  const serviceWith = (forwardAuthorization?: boolean): ExternalService => {
    const manifest: Manifest = {
      fwProtocol: '1.0',
      service: { name: 'tickets', transport: 'http', baseUrl, ...(forwardAuthorization === undefined ? {} : { forwardAuthorization }) },
      entries: [{ name: 'echo', kind: 'query', policy: 'user' }],
    } as Manifest;
    return { manifest, source: 'fw.manifest.json', cwd: '.' };
  };
  const app = { entries: new Map(), policies: {}, schema: defineSchema({}) } as unknown as AppDefinition;
  const call = async (service: ExternalService) => {
    seen.length = 0;
    const result = await callExternalEntry(app, undefined, service, service.manifest.entries[0]!, { auth, traceId: 'trace-forwarding-1', args: {}, authorization: 'Bearer the-callers-fw-token' });
    expect(result).toEqual({ echoed: true });
    expect(seen).toHaveLength(1);
    return seen[0]!;
  };

  it('does not forward the caller’s token by default, but does forward the verified identity', async () => {
    const headers = await call(serviceWith());
    expect(headers.authorization).toBeUndefined();
    expect(headers).toMatchObject({ 'x-fw-user-id': 'ann', 'x-fw-tenant-id': auth.tenantId, 'x-fw-trace-id': 'trace-forwarding-1' });
    expect((await call(serviceWith(false))).authorization).toBeUndefined();
  });

  it('forwards it when the manifest sets forwardAuthorization', async () => {
    expect((await call(serviceWith(true))).authorization).toBe('Bearer the-callers-fw-token');
  });
});

// The manifest's argsSchema is a contract: args it refuses never leave fw, and the caller learns which
// field is wrong, through the real HTTP runtime and a real service.
describe('argsSchema validation before an external call', () => {
  let service: Server;
  let runtime: Server;
  let db: FwDatabase;
  let url: string;
  const received: unknown[] = [];
  const ann = { 'x-fw-user-id': 'ann', 'x-fw-tenant-id': '00000000-0000-4000-8000-0000000000a2', 'content-type': 'application/json' };

  beforeAll(async () => {
    service = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push(JSON.parse(body).args);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"result":{"charged":true}}');
      });
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    const manifest = {
      fwProtocol: '1.0',
      service: { name: 'billing', transport: 'http', baseUrl: `http://127.0.0.1:${(service.address() as AddressInfo).port}` },
      entries: [
        {
          name: 'charge',
          kind: 'query',
          argsSchema: {
            type: 'object',
            required: ['amount', 'customer'],
            additionalProperties: false,
            properties: { amount: { type: 'integer', minimum: 1 }, customer: { type: 'object', required: ['email'], properties: { email: { type: 'string', format: 'email' } } } },
          },
        },
        { name: 'free', kind: 'query' },
        // The service answers {"charged": true}: one schema it satisfies, one it does not.
        { name: 'promised', kind: 'query', path: '/queries/charge', resultSchema: { type: 'object', required: ['charged'], properties: { charged: { type: 'boolean' } } } },
        { name: 'misdescribed', kind: 'query', path: '/queries/charge', resultSchema: { type: 'object', required: ['receipt'], properties: { charged: { type: 'string' } } } },
      ],
    } as Manifest;
    const app = { entries: new Map(), policies: {}, schema: defineSchema({}), external: [{ manifest, source: 'fw.manifest.json', cwd: '.' }] } as unknown as AppDefinition;
    db = await createDatabase({ dataDir: 'memory://' });
    runtime = createServer(createRuntimeHandler({ app, db, dev: true }));
    await new Promise<void>((resolve) => runtime.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(runtime.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    service?.close();
    runtime?.close();
    await db?.close();
  });

  const ask = async (entry: string, args: unknown) => {
    const response = await fetch(`${url}/external/billing/queries/${entry}`, { method: 'POST', headers: ann, body: JSON.stringify({ args }) });
    return { status: response.status, body: (await response.json()) as { ok: boolean; error?: { code: string; diagnostics: { path: string; code: string }[] }; result?: unknown } };
  };

  it('answers 400 validation_failed with each wrong field, and calls nothing', async () => {
    received.length = 0;
    const empty = await ask('charge', {});
    expect(empty.status).toBe(400);
    expect(empty.body.error!.code).toBe('validation_failed');
    expect(empty.body.error!.diagnostics.map((d) => [d.path, d.code])).toEqual([
      ['args.amount', 'required'],
      ['args.customer', 'required'],
    ]);
    const wrong = await ask('charge', { amount: 0, customer: { email: 'not-an-address' }, coupon: 'FREE' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error!.diagnostics.map((d) => [d.path, d.code]).sort()).toEqual([
      ['args.amount', 'minimum'],
      ['args.coupon', 'additionalProperties'],
      ['args.customer.email', 'format'],
    ]);
    // A positive signal that the service was reachable all along: the valid call is the first it sees.
    const valid = await ask('charge', { amount: 5, customer: { email: 'ann@example.com' } });
    expect(valid).toMatchObject({ status: 200, body: { ok: true, result: { charged: true } } });
    expect(received).toEqual([{ amount: 5, customer: { email: 'ann@example.com' } }]);
  });

  it('passes any object to an entry without argsSchema', async () => {
    received.length = 0;
    expect((await ask('free', { anything: [1, 2] })).status).toBe(200);
    expect(received).toEqual([{ anything: [1, 2] }]);
  });

  it('checks the answer against resultSchema: what it promises passes, anything else is a 502 naming each field', async () => {
    expect(await ask('promised', {})).toMatchObject({ status: 200, body: { ok: true, result: { charged: true } } });
    const refused = await ask('misdescribed', {});
    expect(refused.status).toBe(502);
    expect(refused.body.error!.code).toBe('bad_gateway');
    expect(refused.body.error!.diagnostics.map((d) => [d.path, d.code]).sort()).toEqual([
      ['result.charged', 'external_invalid_result'],
      ['result.receipt', 'external_invalid_result'],
    ]);
  });
});
