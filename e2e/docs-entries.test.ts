import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../testing/index.ts';
import { createTestApp, repoRoot } from './support/app.ts';

const ACME = '00000000-0000-4000-8000-0000000000d1';

/** A block that holds several files, split into the files its `// src/…` lines name. */
function files(block: string): Record<string, string> {
  const found: Record<string, string> = {};
  let current: string | undefined;
  for (const line of block.split('\n')) {
    const named = /^\/\/ (src\/\S+\.ts)/.exec(line);
    if (named) found[(current = named[1]!)] = '';
    else if (current) found[current] += `${line}\n`;
  }
  return found;
}

/** The block marked `<!-- run by e2e/docs-entries.test.ts -->` in `doc` (the only one there), as written. */
async function block(doc: string): Promise<string> {
  const text = await readFile(path.join(repoRoot, doc), 'utf8');
  const found = /<!-- run by e2e\/docs-entries\.test\.ts -->\n```ts\n([\s\S]*?)```/.exec(text)?.[1];
  if (!found) throw new Error(`${doc} has no block marked for e2e/docs-entries.test.ts`);
  return found;
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
});
export default schema;
declare module 'fwjs' { interface Register { schema: typeof schema } }
`;
const openTicket = `import { command, z } from 'fwjs';
export default command({
  args: { board: z.number().int(), rank: z.number().int(), subject: z.string() },
  handler: (ctx, args) => ctx.db.insertInto('tickets').values(args).returningAll().executeTakeFirstOrThrow(),
});
`;

// Complete entry files from docs/, each run as written in one app: docs/live.md's paginated liveQuery
// (src/queries/listTickets.ts), docs/endpoints.md's endpoint (src/endpoints/addComment.ts) and
// docs/ai.md's tool and agent (src/ai/tools/noteCount.ts, src/ai/agents/assistant.ts, over the
// template's createNote and listNotes), docs/scheduling.md's closeStaleTickets (with the import it
// leaves out).
describe('entry files of docs/, run as written', () => {
  let app: Awaited<ReturnType<typeof createTestApp>> | undefined;
  let fw: TestApp<any>;
  beforeAll(async () => {
    app = await createTestApp('minimal-web', {
      'src/fw/schema.ts': schema,
      'src/commands/openTicket.ts': openTicket,
      'src/queries/listTickets.ts': await block('docs/live.md'),
      'src/endpoints/addComment.ts': await block('docs/endpoints.md'),
      ...files(await block('docs/ai.md')),
      ...Object.fromEntries(Object.entries(files(await block('docs/scheduling.md'))).map(([file, source]) => [file, `import { command } from 'fwjs';\n${source}`])),
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
});
