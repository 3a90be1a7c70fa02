import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../testing/index.ts';
import { createTestApp } from './support/app.ts';
import { blocksRunBy, docFiles, filesOfBlock } from './support/doc-blocks.ts';

const ACME = '00000000-0000-4000-8000-0000000000d1';

const THIS = 'e2e/docs-entries.test.ts';

/** The one block marked for this test in `doc`. */
async function block(doc: string): Promise<string> {
  const found = await blocksRunBy(THIS, doc);
  if (found.length !== 1) throw new Error(`${doc} has ${found.length} blocks marked for ${THIS}, not one`);
  return found[0]!;
}

// The tables the blocks read and write, which their pages do not show.
const schema = `import { defineSchema, t, table } from 'fwjs';
const schema = defineSchema({
  notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text(), body: t.text().nullable(), author_id: t.text(), created_at: t.timestamptz().defaultNow() }),
  tickets: table({
    id: t.uuid().primaryKey().defaultRandom(), board: t.integer(), rank: t.integer(), subject: t.text(),
    status: t.text().default('pending'), updated_at: t.timestamptz().defaultNow(), closed_at: t.timestamptz().nullable(),
  }),
  comments: table({ id: t.uuid().primaryKey().defaultRandom(), ticket_id: t.uuid(), body: t.text() }),
  accounts: table({ id: t.uuid().primaryKey().defaultRandom(), trial: t.boolean().default(false), reminder_id: t.text().nullable() }),
  reminders: table({ id: t.uuid().primaryKey().defaultRandom(), account_id: t.uuid(), user_id: t.text().nullable(), kind: t.text() }),
  workspaces: table({ id: t.uuid().primaryKey() }, { tenantScoped: false }),
  digests: table({ id: t.uuid().primaryKey().defaultRandom(), kind: t.text(), user_id: t.text().nullable() }),
  orders: table({ id: t.uuid().primaryKey().defaultRandom(), item: t.text(), status: t.text() }),
  users: table({ id: t.uuid().primaryKey().defaultRandom(), email: t.text() }),
});
export default schema;
declare module 'fwjs' { interface Register { schema: typeof schema } }
`;

// The entries the tests call to set up and look, which the pages do not show either.
const helpers: Record<string, string> = {
  'src/commands/openTicket.ts': `import { command, z } from 'fwjs';
export default command({
  args: { board: z.number().int(), rank: z.number().int(), subject: z.string() },
  // Updated at the test's clock, not the database's (which advanceTime does not move): a ticket is
  // fresh when opened however far other tests moved the clock.
  handler: (ctx, args) => ctx.db.insertInto('tickets').values({ ...args, updated_at: ctx.now() }).returningAll().executeTakeFirstOrThrow(),
});
`,
  'src/commands/openAccount.ts': `import { command } from 'fwjs';
export default command({ handler: (ctx) => ctx.db.insertInto('accounts').values({ trial: false }).returningAll().executeTakeFirstOrThrow() });
`,
  // docs/scheduling.md's reminder: records who it ran as.
  'src/commands/sendTrialReminder.ts': `import { command, z } from 'fwjs';
export default command({
  policy: 'system',
  args: { accountId: z.uuid() },
  handler: async (ctx, args) => {
    await ctx.db.insertInto('reminders').values({ account_id: args.accountId, user_id: ctx.auth.userId, kind: ctx.auth.kind }).execute();
  },
});
`,
  'src/queries/listReminders.ts': `import { query } from 'fwjs';
export default query({ handler: (ctx) => ctx.db.selectFrom('reminders').select(['account_id', 'user_id', 'kind', 'tenant_id']).execute() });
`,
  'src/queries/findAccount.ts': `import { query, z } from 'fwjs';
export default query({ args: { id: z.uuid() }, handler: (ctx, args) => ctx.db.selectFrom('accounts').selectAll().where('id', '=', args.id).executeTakeFirstOrThrow() });
`,
  'src/commands/addWorkspace.ts': `import { command, z } from 'fwjs';
export default command({ args: { id: z.uuid() }, handler: async (ctx, args) => { await ctx.db.insertInto('workspaces').values(args).execute(); } });
`,
  // docs/scheduling.md's digest: records who it ran as, in the tenant it ran in.
  'src/commands/sendDigest.ts': `import { command } from 'fwjs';
export default command({
  policy: 'system',
  handler: async (ctx) => { await ctx.db.insertInto('digests').values({ kind: ctx.auth.kind, user_id: ctx.auth.userId }).execute(); },
});
`,
  'src/queries/listDigests.ts': `import { query } from 'fwjs';
export default query({ handler: (ctx) => ctx.db.selectFrom('digests').select(['kind', 'user_id', 'tenant_id']).execute() });
`,
  'src/commands/addUser.ts': `import { command, z } from 'fwjs';
export default command({ args: { email: z.string() }, handler: (ctx, args) => ctx.db.insertInto('users').values(args).returningAll().executeTakeFirstOrThrow() });
`,
  'src/queries/findOrder.ts': `import { query, z } from 'fwjs';
export default query({ args: { id: z.uuid() }, handler: (ctx, args) => ctx.db.selectFrom('orders').select(['item', 'status']).where('id', '=', args.id).executeTakeFirstOrThrow() });
`,
};

// What docs/workflows.md's fulfilOrder calls and leaves out: a payment service and a mailer. They
// record what they were asked in the test's process (the app runs in it), so the test can look.
const services = `const calls = ((globalThis as any).docsWorkflowCalls ??= []);
const payments = { charge: async (input: { orderId: string; idempotencyKey: string }) => (calls.push({ charge: input }), { id: \`ch_\${input.orderId.slice(0, 8)}\` }) };
const mailer = { send: async (input: { text: string; idempotencyKey: string }) => { calls.push({ mail: input }); } };
`;

/** What each page's files leave out, added before (or around) them as written. */
const leftOut: Record<string, (source: string) => string> = {
  'src/commands/startTrial.ts': (source) => `import { command, z } from 'fwjs';\n${source}`,
  // A fragment: the handler of a command over the account it names.
  'src/commands/upgrade.ts': (source) => `import { command, z } from 'fwjs';
export default command({ args: { accountId: z.uuid() }, handler: async (ctx, args) => {\n${source}} });\n`,
  'src/queries/allWorkspaces.ts': (source) => `import { query } from 'fwjs';\n${source}`,
  'src/crons.ts': (source) => `import { crons } from 'fwjs';\n${source}`,
  'src/commands/closeStaleTickets.ts': (source) => `import { command } from 'fwjs';\n${source}`,
  'src/workflows/fulfilOrder.ts': (source) => `${services}${source}`,
  'src/commands/placeOrder.ts': (source) => `import { command, z } from 'fwjs';\n${source}`,
  'src/queries/findSignInUser.ts': (source) => `import { query, z } from 'fwjs';\n${source}`,
  // A fragment: the lookup of an anonymous sign-in that names its workspace, answering whom it found.
  'src/endpoints/signIn.ts': (source) => `import { endpoint, z } from 'fwjs';
type User = { id: string; email: string; tenant_id: string };
export default endpoint({
  method: 'POST', path: '/api/sign-in', policy: 'public', args: { email: z.string(), workspace: z.uuid() },
  handler: async (ctx, { email, workspace: tenantId }) => {
    const workspace = { tenantId };
${source}    return { user: user ?? null };
  },
});
`,
};

const filesOf = (doc: string) => docFiles(THIS, doc, leftOut);

interface Call {
  id: string;
  entry: string;
  cron: string | null;
  status: string;
  runAt: string;
  tenantId: string | null;
  userId: string | null;
}

// Entry files from docs/, each run as written in one app: docs/live.md's paginated liveQuery
// (src/queries/listTickets.ts), docs/endpoints.md's endpoint (src/endpoints/addComment.ts) and its
// findSignInUser with the sign-in's runAsSystem line (inside an endpoint), docs/ai.md's tool and agent
// (src/ai/tools/noteCount.ts, src/ai/agents/assistant.ts, over the template's createNote and
// listNotes), docs/scheduling.md's startTrial and upgrade (upgrade's lines inside a command), its
// forEachTenant cron and closeStaleTickets, and docs/workflows.md's fulfilOrder and placeOrder — each
// with what its page leaves out (leftOut above).
describe('entry files of docs/, run as written', () => {
  let app: Awaited<ReturnType<typeof createTestApp>> | undefined;
  let fw: TestApp<any>;
  beforeAll(async () => {
    app = await createTestApp('minimal-web', {
      'src/fw/schema.ts': schema,
      ...helpers,
      'src/queries/listTickets.ts': await block('docs/live.md'),
      'src/endpoints/addComment.ts': (await blocksRunBy(THIS, 'docs/endpoints.md'))[0]!,
      ...(await filesOf('docs/endpoints.md')),
      ...filesOfBlock(await block('docs/ai.md')),
      ...(await filesOf('docs/scheduling.md')),
      ...(await filesOf('docs/workflows.md')),
    });
    fw = await startTestApp({ root: app.dir });
  }, 120_000);
  afterAll(async () => {
    await fw?.close();
    await app?.remove();
  });

  it('docs/live.md: listTickets pages a board by rank, highest first, a page at a time', async () => {
    const alice = fw.client({ userId: 'alice', tenantId: ACME, role: 'member' });
    for (const [rank, subject] of [[1, 'low'], [3, 'high'], [2, 'mid']] as const) await alice.command('openTicket' as never, { board: 7, rank, subject } as never);
    await alice.command('openTicket' as never, { board: 8, rank: 9, subject: 'other board' } as never);
    const first = (await alice.query('listTickets' as never, { board: 7, page: { cursor: null, numItems: 2 } } as never)) as { page: Array<{ subject: string }>; isDone: boolean; continueCursor: string };
    expect([first.page.map((t) => t.subject), first.isDone]).toEqual([['high', 'mid'], false]);
    const second = (await alice.query('listTickets' as never, { board: 7, page: { cursor: first.continueCursor, numItems: 2 } } as never)) as { page: Array<{ subject: string }>; isDone: boolean };
    expect([second.page.map((t) => t.subject), second.isDone]).toEqual([['low'], true]);
  });

  it('docs/endpoints.md: POST /api/tickets/:id/comments answers 201 with the comment and its location', async () => {
    const ticketId = '00000000-0000-4000-8000-00000000c0de';
    const response = await fetch(`${fw.url}/api/tickets/${ticketId}/comments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-fw-user-id': 'alice', 'x-fw-tenant-id': ACME },
      body: JSON.stringify({ body: 'Looking into it' }),
    });
    expect(response.status).toBe(201);
    const comment = (await response.json()) as { id: string; ticket_id: string; body: string; tenant_id: string };
    expect(comment).toEqual({ id: expect.any(String), ticket_id: ticketId, body: 'Looking into it', tenant_id: ACME });
    expect(response.headers.get('location')).toBe(`/api/tickets/${ticketId}/comments/${comment.id}`);
  });

  it('docs/endpoints.md: an anonymous sign-in finds the user by email in the workspace it names, and only there', async () => {
    const [acme, globex] = ['00000000-0000-4000-8000-0000000000f1', '00000000-0000-4000-8000-0000000000f2'];
    const ada = (await fw.client({ userId: 'admin', tenantId: acme, role: 'member' }).command('addUser' as never, { email: 'ada@acme.test' } as never)) as { id: string };
    const signIn = async (body: unknown) => {
      const response = await fetch(`${fw.url}/api/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return [response.status, ((await response.json()) as { result: unknown }).result];
    };
    // findSignInUser's args lower-case the email; it runs as the system in the named tenant.
    expect(await signIn({ email: 'Ada@Acme.test', workspace: acme })).toEqual([200, { user: { id: ada.id, email: 'ada@acme.test', tenant_id: acme } }]);
    expect(await signIn({ email: 'ada@acme.test', workspace: globex })).toEqual([200, { user: null }]);
  });

  it("docs/ai.md: the assistant calls noteCount, which counts the caller's notes", async () => {
    const tenant = '00000000-0000-4000-8000-0000000000d2';
    const bob = fw.client({ userId: 'bob', tenantId: tenant, role: 'member' });
    await bob.command('createNote' as never, { title: 'One' } as never);
    await bob.command('createNote' as never, { title: 'Two' } as never);
    const response = await fetch(`${fw.url}/ai/agents/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-fw-user-id': 'bob', 'x-fw-tenant-id': tenant },
      body: JSON.stringify({ agent: 'assistant', prompt: 'call noteCount {}', maxSteps: 3 }),
    });
    const body = (await response.json()) as { result: { status: string; toolResults: Array<{ toolName: string; output: unknown }> } };
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.result.status).toBe('completed');
    expect(body.result.toolResults.map((r) => [r.toolName, r.output])).toEqual([['noteCount', { count: 2 }]]);
  });

  it("docs/scheduling.md: closeStaleTickets closes a pending ticket once the test's clock is 8 days on", async () => {
    const carol = fw.client({ userId: 'carol', tenantId: '00000000-0000-4000-8000-0000000000d3', role: 'member' });
    const ticket = (await carol.command('openTicket' as never, { board: 1, rank: 1, subject: 'Stale' } as never)) as { id: string; status: string };
    expect(ticket.status).toBe('pending');
    expect(await carol.command('closeStaleTickets' as never, {} as never)).toEqual({ closed: 0 });
    expect(((await carol.query('listTickets' as never, { board: 1, page: { cursor: null, numItems: 5 } } as never)) as { page: Array<{ status: string }> }).page.map((t) => t.status)).toEqual(['pending']);
    fw.advanceTime('8d');
    const before = fw.now();
    expect(await carol.command('closeStaleTickets' as never, {} as never)).toEqual({ closed: 1 });
    const after = fw.now();
    const closed = ((await carol.query('listTickets' as never, { board: 1, page: { cursor: null, numItems: 5 } } as never)) as { page: Array<{ status: string; closed_at: string }> }).page;
    expect(closed.map((t) => t.status)).toEqual(['closed']);
    // Closed at the handler's ctx.now(): the test's clock, 8 days on.
    expect(Date.parse(closed[0]!.closed_at)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(closed[0]!.closed_at)).toBeLessThanOrEqual(after);
  });

  /** The scheduled calls in `status` (the admin route `fw schedule list` asks; open in dev mode). */
  async function scheduled(status: string): Promise<Call[]> {
    const response = await fetch(`${fw.url}/_fw/schedule?status=${status}&limit=500`);
    expect(response.status).toBe(200);
    return ((await response.json()) as { calls: Call[] }).calls;
  }

  it("docs/scheduling.md: startTrial's reminder runs as the member 13 days on; upgrade's cancel means it never runs", async () => {
    const tenant = '00000000-0000-4000-8000-0000000000d4';
    const dave = fw.client({ userId: 'dave', tenantId: tenant, role: 'member' });
    const kept = (await dave.command('openAccount' as never, {} as never)) as { id: string };
    const upgraded = (await dave.command('openAccount' as never, {} as never)) as { id: string };
    await fw.deliverEvents(); // whatever another test left due runs now, not in the batch below
    const started = fw.now();
    await dave.command('startTrial' as never, { accountId: kept.id } as never);
    await dave.command('startTrial' as never, { accountId: upgraded.id } as never);
    const account = (id: string) => dave.query('findAccount' as never, { id } as never) as Promise<{ trial: boolean; reminder_id: string }>;
    const [keptReminder, cancelledReminder] = [(await account(kept.id)).reminder_id, (await account(upgraded.id)).reminder_id];
    expect((await account(kept.id)).trial).toBe(true);
    expect((await scheduled('pending')).filter((c) => c.tenantId === tenant)).toEqual([
      expect.objectContaining({ id: keptReminder, entry: 'sendTrialReminder', userId: 'dave', runAt: new Date(started + 13 * 86_400_000).toISOString() }),
      expect.objectContaining({ id: cancelledReminder, entry: 'sendTrialReminder', userId: 'dave', runAt: new Date(started + 13 * 86_400_000).toISOString() }),
    ]);

    await dave.command('upgrade' as never, { accountId: upgraded.id } as never);
    expect((await scheduled('cancelled')).filter((c) => c.tenantId === tenant).map((c) => c.id)).toEqual([cancelledReminder]);

    fw.advanceTime('12d');
    await fw.deliverEvents();
    expect(await dave.query('listReminders' as never, {} as never)).toEqual([]);
    fw.advanceTime('1d');
    const delivered = await fw.deliverEvents();
    expect(delivered.outcomes.filter((o) => o.event === 'fw.call:sendTrialReminder').map((o) => o.kind)).toEqual(['delivered']);
    // Ran once, as the member who started the trial, for the account that kept it.
    expect(await dave.query('listReminders' as never, {} as never)).toEqual([{ account_id: kept.id, user_id: 'dave', kind: 'user', tenant_id: tenant }]);
    expect((await scheduled('delivered')).filter((c) => c.tenantId === tenant).map((c) => c.id)).toEqual([keptReminder]);
    expect((await scheduled('cancelled')).filter((c) => c.tenantId === tenant).map((c) => c.id)).toEqual([cancelledReminder]);
  });

  it("docs/scheduling.md: the digest cron calls sendDigest once in each tenant allWorkspaces answers, as the system", async () => {
    const workspaces = ['00000000-0000-4000-8000-0000000000e1', '00000000-0000-4000-8000-0000000000e2'];
    const outside = '00000000-0000-4000-8000-0000000000e3';
    const reader = (tenantId: string) => fw.client({ userId: 'erin', tenantId, role: 'member' });
    await fw.deliverEvents(); // the cron's next tick has its row; a tick another test's clock passed runs now
    for (const id of workspaces) await reader(id).command('addWorkspace' as never, { id } as never);
    fw.advanceTime('1d'); // past exactly one 07:00 tick
    const delivered = await fw.deliverEvents();
    expect(delivered.outcomes.filter((o) => o.event === 'fw.call:sendDigest').map((o) => o.kind)).toEqual(['delivered', 'delivered']);
    for (const tenant of workspaces) expect(await reader(tenant).query('listDigests' as never, {} as never)).toEqual([{ kind: 'system', user_id: null, tenant_id: tenant }]);
    expect(await reader(outside).query('listDigests' as never, {} as never)).toEqual([]);
    // The ticks are rows with no tenant; the calls they made, one per tenant.
    expect((await scheduled('delivered')).filter((c) => c.entry === 'sendDigest' && c.tenantId !== null).map((c) => [c.cron, c.tenantId]).sort()).toEqual(workspaces.map((id) => ['digest', id]));
  });

  it('docs/workflows.md: placeOrder starts fulfilOrder, whose charge, ship and mail steps run once and whose result is stored', async () => {
    const tenant = '00000000-0000-4000-8000-0000000000d5';
    const frank = fw.client({ userId: 'frank', tenantId: tenant, role: 'member' });
    const { order, runId } = (await frank.command('placeOrder' as never, { item: 'Lamp' } as never)) as { order: { id: string; status: string }; runId: string };
    expect(order.status).toBe('placed');
    const calls: unknown[] = ((globalThis as any).docsWorkflowCalls ??= []);
    const before = calls.length;
    const delivered = await fw.deliverEvents();
    expect(delivered.outcomes.filter((o) => o.event === 'fw.workflow:fulfilOrder').map((o) => o.kind)).toEqual(['delivered']);
    const chargeId = `ch_${order.id.slice(0, 8)}`;
    expect(calls.slice(before)).toEqual([
      { charge: { orderId: order.id, idempotencyKey: `${runId}:charge` } },
      { mail: { text: 'Mock answer: no tool was requested.', idempotencyKey: `${runId}:mail` } },
    ]);
    expect(await frank.query('findOrder' as never, { id: order.id } as never)).toEqual({ item: 'Lamp', status: 'shipped' });
    // The run as the dashboard's run detail shows it (with its result; `fw workflows show` leaves app data out).
    const run = (await (await fetch(`${fw.url}/_fw/dashboard/api/workflows/${runId}`)).json()) as { status: string; result: unknown; steps: Array<{ name: string; attempt: number }> };
    expect(run).toMatchObject({ status: 'completed', attempts: 1, result: { chargeId } });
    expect(run.steps.map((step) => [step.name, step.attempt])).toEqual([['charge', 1], ['ship', 1], ['mail', 1]]);
  });
});
