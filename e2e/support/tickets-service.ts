import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import type { Manifest } from '../../runtime/core/external-manifest.ts';
import { defineSchema } from '../../runtime/core/schema.ts';
import { createDatabase } from '../../runtime/db/database.ts';
import { createRuntimeHandler } from '../../runtime/http/handler.ts';

export type Ticket = { id: string; subject: string };

/**
 * An external `tickets` service (createTicket, listTickets; its tickets kept per tenant, as the
 * bridge tells it) behind a real fw runtime that allows `pageOrigin`; for the client hooks' tests.
 * The service answers CORS as well: in a happy-dom test process fetch is the page's, the bridge's too.
 */
export async function startTicketsRuntime(pageOrigin: string): Promise<{ url: string; tickets: Map<string, Ticket[]>; close(): Promise<void> }> {
  const tickets = new Map<string, Ticket[]>();
  const service = createServer((req, res) => {
    res.setHeader('access-control-allow-origin', '*');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { 'access-control-allow-headers': '*', 'access-control-allow-methods': 'POST' }).end();
      return;
    }
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const tenant = String(req.headers['x-fw-tenant-id']);
      const own = tickets.get(tenant) ?? [];
      tickets.set(tenant, own);
      const creating = req.url === '/commands/createTicket';
      if (creating) own.push({ id: randomUUID(), subject: JSON.parse(body).args.subject });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, result: creating ? own.at(-1) : own }));
    });
  });
  await listen(service);
  const manifest = {
    fwProtocol: '1.0',
    // A generous timeout: only a hang should fail a test on a busy machine.
    service: { name: 'tickets', transport: 'http', baseUrl: `http://127.0.0.1:${(service.address() as AddressInfo).port}`, timeoutMs: 60_000 },
    entries: [
      { name: 'createTicket', kind: 'command', needsApproval: false, argsSchema: { type: 'object', required: ['subject'], properties: { subject: { type: 'string', minLength: 1 } } } },
      { name: 'listTickets', kind: 'query' },
    ],
  } as Manifest;
  const app = { entries: new Map(), policies: {}, schema: defineSchema({}), external: [{ manifest, source: 'fw.manifest.json', cwd: '.' }] } as unknown as AppDefinition;
  const db = await createDatabase({ dataDir: 'memory://' });
  const runtime = createServer(createRuntimeHandler({ app, db, dev: true, cors: { origins: [pageOrigin] } }));
  await listen(runtime);
  return {
    url: `http://127.0.0.1:${(runtime.address() as AddressInfo).port}`,
    tickets,
    async close() {
      service.close();
      runtime.close();
      await db.close();
    },
  };
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
}
