import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Auth } from '../entries.ts';
import type { AppDefinition } from '../registry.ts';
import { defineSchema } from '../schema.ts';
import type { Manifest } from './manifest.ts';
import { callExternalEntry, type ExternalService } from './services.ts';

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
