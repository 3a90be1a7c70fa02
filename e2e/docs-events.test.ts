import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../testing/index.ts';
import { createTestApp, repoRoot } from './support/app.ts';

const ACME = '00000000-0000-4000-8000-0000000000e1';

/**
 * docs/events.md's first block, as written, split into the files its `// src/…` lines name, each with
 * the imports the block leaves out.
 */
async function eventsBlockFiles(): Promise<Record<string, string>> {
  const doc = await readFile(path.join(repoRoot, 'docs/events.md'), 'utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(doc)![1]!;
  const files: Record<string, string> = {};
  let current: string | undefined;
  for (const line of block.split('\n')) {
    const named = /^\/\/ (src\/\S+\.ts)/.exec(line);
    if (named) files[(current = named[1]!)] = "import { action, command, z } from 'fwjs';\n";
    else if (current) files[current] += `${line}\n`;
  }
  return files;
}

// The tables the block writes, both tenant-scoped (the default): a unique ticket_id in triage is
// unique within the tenant, (tenant_id, ticket_id).
const schema = `import { defineSchema, t, table } from 'fwjs';
const schema = defineSchema({
  tickets: table({ id: t.uuid().primaryKey().defaultRandom(), subject: t.text(), body: t.text() }),
  triage: table({ id: t.uuid().primaryKey().defaultRandom(), ticket_id: t.uuid().unique(), priority: t.text() }),
});
export default schema;
declare module 'fwjs' { interface Register { schema: typeof schema } }
`;

// A second delivery of the same event, as at-least-once delivery may make it (the worker died after
// the action's commit, before marking the row delivered).
const redeliver = `import { command, z } from 'fwjs';
export default command({
  args: { ticketId: z.uuid() },
  handler: (ctx, args) => { ctx.emit('ticket.created', { ticketId: args.ticketId }); },
});
`;

const listTriage = `import { query } from 'fwjs';
export default query({ handler: (ctx) => ctx.db.selectFrom('triage').select(['ticket_id', 'tenant_id']).execute() });
`;

describe("docs/events.md's idempotent action, run as written on tenant-scoped tables", () => {
  let app: Awaited<ReturnType<typeof createTestApp>> | undefined;
  let fw: TestApp<any>;
  beforeAll(async () => {
    const files = await eventsBlockFiles();
    expect(Object.keys(files)).toEqual(['src/commands/createTicket.ts', 'src/actions/triageTicket.ts']);
    app = await createTestApp('minimal-web', { ...files, 'src/fw/schema.ts': schema, 'src/commands/redeliverTicketCreated.ts': redeliver, 'src/queries/listTriage.ts': listTriage });
    fw = await startTestApp({ root: app.dir });
  }, 120_000);
  afterAll(async () => {
    await fw?.close();
    await app?.remove();
  });

  it('triages a ticket once, however often its event is delivered', async () => {
    const alice = fw.client({ userId: 'alice', tenantId: ACME, role: 'member' });
    const ticket = (await alice.command('createTicket' as never, { subject: 'Printer', body: 'On fire' } as never)) as { id: string };
    const first = await fw.deliverEvents();
    expect(first).toMatchObject({ delivered: 1, retried: 0, dead: 0 });
    await alice.command('redeliverTicketCreated' as never, { ticketId: ticket.id } as never);
    const second = await fw.deliverEvents();
    expect(second).toMatchObject({ delivered: 1, retried: 0, dead: 0 });
    expect(await alice.query('listTriage' as never, {} as never)).toEqual([{ ticket_id: ticket.id, tenant_id: ACME }]);
  });
});
