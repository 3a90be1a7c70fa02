import { startTestApp, type TestApp } from 'fwjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../src/fw/_generated/api.ts';

// The app's entries through fw's runtime (policies, validation, row-level security) on a throwaway
// in-memory database, called with the same typed client the web app uses. Run with `npm test`
// (`fw test`); after a failure, `fw repair diagnose --from-last-test-run` explains it in fw terms.
const ACME = '00000000-0000-4000-8000-000000000001';
const GLOBEX = '00000000-0000-4000-8000-000000000002';

let fw: TestApp<typeof api>;
beforeAll(async () => {
  fw = await startTestApp({ api });
}, 60_000);
afterAll(() => fw?.close());

const as = (role: string, tenantId = ACME, userId = `${role}-1`) => fw.client({ userId, tenantId, role });

describe('tickets', () => {
  it('an agent opens a ticket and lists it', async () => {
    const ticket = await as('agent').command('createTicket', { subject: 'Printer on fire', body: 'Smoke everywhere.' });
    expect(ticket).toMatchObject({ subject: 'Printer on fire', status: 'open', priority: 'normal', priority_source: 'default', created_by: 'agent-1', tenant_id: ACME });
    const listed = await as('agent').query('listTickets', {});
    expect(listed.map((t) => t.id)).toContain(ticket.id);
  });

  it('keeps every tenant’s tickets to itself', async () => {
    const ticket = await as('agent').command('createTicket', { subject: 'Acme only', body: '' });
    const globexAgent = as('agent', GLOBEX, 'globex-agent');
    expect(await globexAgent.query('listTickets', {})).toEqual([]);
    // Another tenant's ticket does not exist for Globex, even for its admin.
    await expect(globexAgent.command('closeTicket', { ticketId: ticket.id })).rejects.toMatchObject({ code: 'not_found' });
    await expect(as('admin', GLOBEX).command('assignTicket', { ticketId: ticket.id, assignee: 'mallory' })).rejects.toMatchObject({ code: 'not_found' });
    const own = (await as('agent').query('listTickets', {})).find((t) => t.id === ticket.id);
    expect(own).toMatchObject({ status: 'open', assignee: null });
  });

  it('lets only admins assign, and only agents and admins work tickets', async () => {
    const ticket = await as('agent').command('createTicket', { subject: 'Needs an owner', body: '' });
    await expect(as('agent').command('assignTicket', { ticketId: ticket.id, assignee: 'sam' })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(as('viewer').query('listTickets', {})).rejects.toMatchObject({ code: 'forbidden' });
    expect(await as('admin').command('assignTicket', { ticketId: ticket.id, assignee: 'sam' })).toMatchObject({ id: ticket.id, assignee: 'sam' });
  });

  it('triage records a priority and a summary, keeping a priority the opener chose', async () => {
    const open = await as('agent').command('createTicket', { subject: 'Site down', body: 'Nothing loads.' });
    const chosen = await as('agent').command('createTicket', { subject: 'Checkout broken', body: '', priority: 'urgent' });
    // What fw dev's outbox worker does after each createTicket commits (fw's mock model answers).
    const delivered = await fw.deliverEvents();
    expect(delivered.outcomes.filter((o) => o.kind !== 'delivered')).toEqual([]);
    const tickets = await as('agent').query('listTickets', {});
    const byId = (id: string) => tickets.find((t) => t.id === id)!;
    expect(byId(open.id)).toMatchObject({ priority_source: 'triage', triaged_at: expect.any(String), triage_summary: expect.any(String) });
    expect(['low', 'normal', 'high', 'urgent']).toContain(byId(open.id).priority);
    expect(byId(chosen.id)).toMatchObject({ priority: 'urgent', priority_source: 'user', triaged_at: expect.any(String) });
    // Nothing left to deliver: a second pass changes nothing.
    expect((await fw.deliverEvents()).claimed).toBe(0);
  });
});
