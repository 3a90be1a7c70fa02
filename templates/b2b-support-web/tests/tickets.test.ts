import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from 'fwjs/testing';
import { jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressKey } from '../src/auth/sign-in-limits.ts';
import { api } from '../src/fw/_generated/api.ts';

// The app's entries through fw's runtime (policies, validation, row-level security) on a throwaway
// in-memory database, called with the same typed client the web app uses. Run with `npm test`
// (`fw test`); after a failure, `fw repair diagnose --from-last-test-run` explains it in fw terms.
// Time is the test's: `fw.advanceTime('4h')` then `fw.deliverEvents()` runs what fell due by then
// (scheduled calls, cron ticks, waiting workflows) — no test waits for the wall clock.
const ACME = '00000000-0000-4000-8000-000000000001';
const GLOBEX = '00000000-0000-4000-8000-000000000002';

// What src/endpoints/signIn.ts signs tokens with: the settings `fw start` verifies them with under
// FW_AUTH=jwt. (The test app itself still identifies callers by dev headers.)
const signing = { FW_AUTH: 'jwt', FW_JWT_ISSUER: 'https://desk.test/', FW_JWT_AUDIENCE: 'b2b-support-web', FW_JWT_HS_SECRET: 'a-test-secret-of-at-least-32-bytes!!' };

let fw: TestApp<typeof api>;
beforeAll(async () => {
  Object.assign(process.env, signing);
  fw = await startTestApp({ api });
}, 60_000);
afterAll(() => fw?.close());

const as = (role: string, tenantId = ACME, userId = `${role}-1`) => fw.client({ userId, tenantId, role });
const conversation = async (ticketId: string, tenantId = ACME) => (await as('agent', tenantId).query('liveTicket', { ticketId })).comments.map((c) => `${c.author_kind}: ${c.body}`);
const ticketOf = async (ticketId: string, tenantId = ACME) => (await as('agent', tenantId).query('liveTicket', { ticketId })).ticket;

describe('tickets', () => {
  it('an agent opens a ticket and lists it', async () => {
    const ticket = await as('agent').command('createTicket', { subject: 'Printer on fire', body: 'Smoke everywhere.' });
    expect(ticket).toMatchObject({ subject: 'Printer on fire', status: 'open', priority: 'normal', priority_source: 'default', created_by: 'agent-1', tenant_id: ACME });
    const listed = await as('agent').query('listTickets', {});
    expect(listed.map((t) => t.id)).toContain(ticket.id);
    const firstPage = await as('agent').query('liveTickets', { view: 'active', page: { cursor: null, numItems: 10 } });
    expect(firstPage.page[0]).toMatchObject({ id: ticket.id });
  });

  it('keeps every tenant’s tickets to itself', async () => {
    const ticket = await as('agent').command('createTicket', { subject: 'Acme only', body: '' });
    const globexAgent = as('agent', GLOBEX, 'globex-agent');
    expect(await globexAgent.query('listTickets', {})).toEqual([]);
    expect(await globexAgent.query('liveTicket', { ticketId: ticket.id })).toEqual({ ticket: null, comments: [] });
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

  it('escalates a ticket nobody answered within its 4-hour SLA, and leaves an answered one alone', async () => {
    const ignored = await as('agent').command('createTicket', { subject: 'Invoices missing', body: '', priority: 'low' });
    const answered = await as('agent').command('createTicket', { subject: 'Password reset', body: '', priority: 'low' });
    await as('agent').command('addComment', { ticketId: answered.id, body: 'A reset link is on its way.' });
    await fw.deliverEvents(); // triage, and the reply's workflow starts waiting
    expect(await ticketOf(ignored.id)).toMatchObject({ sla_breached_at: null, priority: 'low' });

    fw.advanceTime('4h');
    const delivered = await fw.deliverEvents();
    expect(delivered.outcomes.filter((o) => o.kind !== 'delivered')).toEqual([]);
    expect(await ticketOf(ignored.id)).toMatchObject({ status: 'open', priority: 'high', sla_breached_at: expect.any(String) });
    expect(await conversation(ignored.id)).toEqual(['system: First-response SLA missed: escalated to high.']);
    expect(await ticketOf(answered.id)).toMatchObject({ status: 'pending', priority: 'low', sla_breached_at: null });
  });

  it('after a reply, waits for the customer: reminds them after a day, closes after three', async () => {
    const ticket = await as('agent').command('createTicket', { subject: 'Export is slow', body: '' });
    await as('agent').command('addComment', { ticketId: ticket.id, body: 'Which export do you use?' });
    await fw.deliverEvents();
    expect(await ticketOf(ticket.id)).toMatchObject({ status: 'pending' });

    fw.advanceTime('1d');
    await fw.deliverEvents();
    expect(await conversation(ticket.id)).toEqual(['agent: Which export do you use?', 'system: No answer for a day: the customer was reminded.']);
    expect(await ticketOf(ticket.id)).toMatchObject({ status: 'pending' });

    fw.advanceTime('2d');
    await fw.deliverEvents();
    expect(await ticketOf(ticket.id)).toMatchObject({ status: 'closed' });
    expect((await conversation(ticket.id)).at(-1)).toBe('system: Closed after three days without an answer.');
  });

  it('the customer’s answer ends the wait: no reminder, and the ticket is the team’s again', async () => {
    const ticket = await as('agent').command('createTicket', { subject: 'Wrong VAT rate', body: '' });
    await as('agent').command('addComment', { ticketId: ticket.id, body: 'Which country?' });
    await fw.deliverEvents(); // the run waits for ticket.customerReplied
    await as('agent').command('addComment', { ticketId: ticket.id, body: 'Germany.', from: 'customer' });
    await fw.deliverEvents(); // the signal wakes it
    expect(await ticketOf(ticket.id)).toMatchObject({ status: 'open' });

    fw.advanceTime('3d');
    await fw.deliverEvents();
    expect(await conversation(ticket.id)).toEqual(['agent: Which country?', 'customer: Germany.']);
    expect(await ticketOf(ticket.id)).toMatchObject({ status: 'open', sla_breached_at: null });
  });

  it('records a nightly digest per tenant', async () => {
    const globex = as('agent', GLOBEX, 'globex-agent');
    await globex.command('createTicket', { subject: 'Login loops', body: '' });
    const replied = await globex.command('createTicket', { subject: 'Logo upload', body: '' });
    await globex.command('addComment', { ticketId: replied.id, body: 'PNG or SVG?' });
    await fw.deliverEvents(); // the worker plans each cron's next tick (02:00 UTC)

    fw.advanceTime('1d');
    await fw.deliverEvents();
    expect(await globex.query('latestDigest', {})).toMatchObject({ open_count: 1, pending_count: 1, tenant_id: GLOBEX });
  });
});

describe('sign-in', () => {
  /** POST /api/auth/sign-in as an anonymous caller: the status and the JSON answer. */
  const signIn = async (body: { workspace: string; email: string; password: string }) => {
    const response = await fetch(`${fw.url}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, body: await response.json() };
  };
  /** A user of its own (each test owns its data), added by the workspace's admin. */
  const addUser = async (tenantId: string, role: 'agent' | 'admin' = 'agent') => {
    const email = `sam-${randomUUID()}@example.com`;
    const user = await as('admin', tenantId).command('addUser', { email, name: 'Sam', role, password: 'correct horse battery' });
    return { ...user, email };
  };
  const refusal = { ok: false, error: { code: 'unauthenticated', message: 'Wrong workspace, email or password.', reason: 'invalid_credentials', diagnostics: [{ path: 'body', code: 'invalid_credentials', message: 'No user of this workspace has this email and password.' }] } };

  it('answers a token fw accepts, carrying the user, the workspace’s tenant and the role', async () => {
    const user = await addUser(ACME, 'admin');
    expect(user).toEqual({ id: expect.any(String), email: user.email, name: 'Sam', role: 'admin', created_at: expect.any(String) });
    const { status, body } = await signIn({ workspace: ' ACME ', email: user.email.toUpperCase(), password: 'correct horse battery' });
    expect(status).toBe(200);
    expect(body.result).toEqual({ token: expect.any(String), expiresAt: expect.any(Number), user: { id: user.id, email: user.email, name: 'Sam', role: 'admin' }, workspace: { slug: 'acme', name: 'Acme' } });
    const { payload, protectedHeader } = await jwtVerify(body.result.token, new TextEncoder().encode(signing.FW_JWT_HS_SECRET), { issuer: signing.FW_JWT_ISSUER, audience: signing.FW_JWT_AUDIENCE, algorithms: ['HS256'] });
    expect(protectedHeader).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload).toEqual({ sub: user.id, tenant_id: ACME, role: 'admin', iss: signing.FW_JWT_ISSUER, aud: signing.FW_JWT_AUDIENCE, iat: expect.any(Number), exp: body.result.expiresAt });
    expect(payload.exp! - payload.iat!).toBe(3600);
  });

  it('gives a wrong password, an unknown email and an unknown workspace the same answer', async () => {
    const user = await addUser(ACME);
    const answers = await Promise.all([
      signIn({ workspace: 'acme', email: user.email, password: 'correct horse battery!' }),
      signIn({ workspace: 'acme', email: `nobody-${randomUUID()}@example.com`, password: 'correct horse battery' }),
      signIn({ workspace: 'initech', email: user.email, password: 'correct horse battery' }),
    ]);
    for (const answer of answers) expect(answer).toEqual({ status: 401, body: { ...refusal, traceId: expect.any(String) } });
  });

  it('finds a user only in their own workspace: an Acme user gets no Globex token', async () => {
    const user = await addUser(ACME);
    expect(await signIn({ workspace: 'globex', email: user.email, password: 'correct horse battery' })).toEqual({ status: 401, body: { ...refusal, traceId: expect.any(String) } });
    // The same email may belong to someone else in Globex; each signs in to their own workspace only.
    await as('admin', GLOBEX).command('addUser', { email: user.email, name: 'Other Sam', password: 'another long password' });
    expect(await signIn({ workspace: 'globex', email: user.email, password: 'correct horse battery' })).toMatchObject({ status: 401 });
    const globex = await signIn({ workspace: 'globex', email: user.email, password: 'another long password' });
    expect(globex.body.result).toMatchObject({ user: { name: 'Other Sam' }, workspace: { slug: 'globex' } });
    const { payload } = await jwtVerify(globex.body.result.token, new TextEncoder().encode(signing.FW_JWT_HS_SECRET));
    expect(payload).toMatchObject({ tenant_id: GLOBEX, sub: globex.body.result.user.id });
  });

  it('stops trying passwords for an email after ten wrong ones, for fifteen minutes (429 with Retry-After); then the right one works', async () => {
    const user = await addUser(ACME);
    const attempt = (email: string, password: string) =>
      fetch(`${fw.url}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workspace: 'acme', email, password }) });
    for (let i = 0; i < 10; i++) expect((await attempt(user.email, `wrong password ${i}`)).status).toBe(401);
    // Even the right password is not tried now; an unknown email locks the same way (nothing tells them apart).
    const locked = await attempt(user.email, 'correct horse battery');
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toBe('900');
    expect((await locked.json()).error).toEqual({ code: 'too_many_requests', reason: 'sign_in_locked', message: 'Too many wrong passwords for this email. Try again in 15 minutes.', diagnostics: [] });
    const stranger = `nobody-${randomUUID()}@example.com`;
    for (let i = 0; i < 10; i++) expect((await attempt(stranger, 'a guess at a password')).status).toBe(401);
    expect((await attempt(stranger, 'a guess at a password')).status).toBe(429);
    // Other emails of the workspace are not affected.
    const colleague = await addUser(ACME);
    expect((await signIn({ workspace: 'acme', email: colleague.email, password: 'correct horse battery' })).status).toBe(200);
    // Fifteen minutes after the first wrong password, the right one signs in, and clears the count.
    fw.advanceTime('15m');
    expect((await signIn({ workspace: 'acme', email: user.email, password: 'correct horse battery' })).status).toBe(200);
    for (let i = 0; i < 9; i++) expect((await attempt(user.email, `wrong again ${i}`)).status).toBe(401);
    expect((await signIn({ workspace: 'acme', email: user.email, password: 'correct horse battery' })).status).toBe(200);
    // About thirty sign-ins, each an scrypt hash of tens of milliseconds (several times that on a busy machine).
  }, 60_000);

  it('stops one address after fifty wrong passwords over any emails (password spraying), for fifteen minutes, even for a right password', async () => {
    // Every sign-in of this test app comes from 127.0.0.1: a window of its own, past the other tests' failures.
    fw.advanceTime('15m');
    const colleague = await addUser(ACME);
    for (let i = 0; i < 50; i++) expect((await signIn({ workspace: 'acme', email: `guess-${i}-${randomUUID()}@example.com`, password: 'Summer2026!' })).status).toBe(401);
    const sprayed = await fetch(`${fw.url}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workspace: 'acme', email: colleague.email, password: 'correct horse battery' }) });
    expect(sprayed.status).toBe(429);
    expect(sprayed.headers.get('retry-after')).toBe('900');
    expect((await sprayed.json()).error).toEqual({ code: 'too_many_requests', reason: 'sign_in_address_locked', message: 'Too many wrong passwords from this address. Try again in 15 minutes.', diagnostics: [] });
    // Counted per workspace: Globex still answers this address.
    expect((await signIn({ workspace: 'globex', email: colleague.email, password: 'correct horse battery' })).status).toBe(401);
    fw.advanceTime('15m');
    expect((await signIn({ workspace: 'acme', email: colleague.email, password: 'correct horse battery' })).status).toBe(200);
  }, 180_000);

  it('counts an IPv6 address by its /64 (one host may take any address in it), an IPv4 one as it is', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('2001:db8:1:2::9')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('2001:db8:1:3::9')).not.toBe(addressKey('2001:db8:1:2::9'));
  });

  it('lets only admins add people, never twice with one email, and never shows a password hash', async () => {
    await expect(as('agent').command('addUser', { email: 'x@example.com', name: 'X', password: 'correct horse battery' })).rejects.toMatchObject({ code: 'forbidden' });
    const user = await addUser(ACME);
    await expect(as('admin').command('addUser', { email: user.email, name: 'Again', password: 'correct horse battery' })).rejects.toMatchObject({ code: 'conflict', reason: 'email_taken' });
    await expect(as('admin').command('addUser', { email: `short-${randomUUID()}@example.com`, name: 'Short', password: 'too short' })).rejects.toMatchObject({ code: 'validation_failed' });
    // The lookup sign-in uses is the system's alone: not reachable over HTTP, even by an admin.
    await expect(as('admin').query('findSignInUser', { email: user.email, address: '127.0.0.1' })).rejects.toMatchObject({ code: 'forbidden' });
  });
});
