// Type tests: checked by `npm run typecheck`; every @ts-expect-error must stay an error.
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { action, command, endpoint, query, workflow } from './entries.ts';
import { type Database, defineSchema, t, table } from './schema.ts';

const schema = defineSchema({
  notes: table({
    id: t.uuid().primaryKey().defaultRandom(),
    title: t.text(),
    body: t.text().nullable(),
    status: t.enum(['open', 'closed']).default('open'),
    created_at: t.timestamptz().defaultNow(),
  }),
  settings: table({ key: t.text().primaryKey(), value: t.jsonb<{ on: boolean }>() }, { tenantScoped: false }),
});
declare const db: Kysely<Database<typeof schema>>;

export async function selects() {
  const row = await db.selectFrom('notes').selectAll().executeTakeFirstOrThrow();
  const title: string = row.title;
  const body: string | null = row.body;
  const created: Date = row.created_at;
  const status: 'open' | 'closed' = row.status;
  const tenant: string = row.tenant_id;
  // @ts-expect-error body may be null
  const notNull: string = row.body;
  const setting = await db.selectFrom('settings').selectAll().executeTakeFirstOrThrow();
  const on: boolean = setting.value.on;
  // @ts-expect-error tables that are not tenant-scoped have no tenant_id
  setting.tenant_id;
  // @ts-expect-error unknown table
  db.selectFrom('nope');
  return { title, body, created, status, tenant, notNull, on };
}

export async function inserts() {
  // Defaults, nullable columns and tenant_id may be left out.
  await db.insertInto('notes').values({ title: 'x' }).execute();
  await db.insertInto('notes').values({ title: 'x', body: null, created_at: new Date(), status: 'closed' }).execute();
  // @ts-expect-error title is required
  await db.insertInto('notes').values({ body: 'x' }).execute();
  // @ts-expect-error not an enum value
  await db.insertInto('notes').values({ title: 'x', status: 'archived' }).execute();
}

export const typedArgs = command({
  args: { n: z.number().int(), tag: z.string().optional() },
  handler: (ctx, args) => {
    const n: number = args.n;
    const tag: string | undefined = args.tag;
    // @ts-expect-error tag may be undefined
    const strict: string = args.tag;
    ctx.emit('typed', { n });
    return { n, tag, strict };
  },
});

export const schemaArgs = query({
  args: z.object({ id: z.string().uuid() }),
  handler: (ctx, args) => {
    const id: string = args.id;
    // @ts-expect-error queries cannot emit
    ctx.emit('nope');
    return id;
  },
});

// @ts-expect-error defaultRandom() is for uuid columns
t.text().defaultRandom();

// Callers send the schema's input; handlers get its output.
const withDefault = command({
  args: { title: z.string(), tags: z.array(z.string()).default([]) },
  handler: (_ctx, args) => ({ count: args.tags.length }),
});
type WithDefaultInput = import('./entries.ts').EntryInput<typeof withDefault>;
type WithDefaultResult = import('./entries.ts').EntryResult<typeof withDefault>;
export const inputOk: WithDefaultInput = { title: 'x' };
export const resultOk: WithDefaultResult = { count: 1 };
// @ts-expect-error title is required from callers
export const inputMissing: WithDefaultInput = {};

// AI lives in actions, workflows and endpoints; commands and queries have no ctx.ai or ctx.agent.
export const aiInAction = action({ handler: (ctx) => ctx.agent.run({ agent: 'assistant', prompt: 'hi' }) });
// An action sees the event it handles; its args are the validated payload.
export const eventInAction = action({
  on: 'ticket.created',
  args: { ticketId: z.uuid() },
  handler: (ctx, args) => {
    const key: string = ctx.event.idempotencyKey;
    const attempt: number = ctx.event.attempt;
    const id: string = args.ticketId;
    // @ts-expect-error the payload's fields are in args, typed
    const missing: string = args.subject;
    return { key, attempt, id, missing };
  },
});
export const aiInEndpoint = endpoint({ method: 'POST', path: '/triage', handler: (ctx) => ctx.ai.generateText({ prompt: 'hi' }) });
// Endpoints get their path params, query and headers as strings.
export const paramsInEndpoint = endpoint({ method: 'GET', path: '/api/t/:id', handler: (ctx) => { const id: string | undefined = ctx.params.id; return id; } });
// Endpoints run a system entry in a tenant: the result is what the caller says it is; the tenant is required.
export const systemInEndpoint = endpoint({
  method: 'POST',
  path: '/api/sign-in',
  policy: 'public',
  handler: async (ctx) => {
    const user: { id: string } | null = await ctx.runAsSystem<{ id: string } | null>('findUser', { email: 'a@b.c' }, { tenantId: null });
    // @ts-expect-error the tenant must be named (null for none)
    await ctx.runAsSystem('findUser', {}, {});
    return user;
  },
});
// @ts-expect-error endpoint methods are GET, POST, PUT, PATCH, DELETE
export const badMethodEndpoint = endpoint({ method: 'HEAD', path: '/api/t', handler: () => 1 });
export const aiInCommand = command({
  // @ts-expect-error commands run in a transaction: no ctx.ai
  handler: (ctx) => ctx.ai.generateText({ prompt: 'hi' }),
});
export const agentInQuery = query({
  // @ts-expect-error queries have no ctx.agent
  handler: (ctx) => ctx.agent.run({ agent: 'assistant', prompt: 'hi' }),
});
// Workflows: durable steps with typed results, the run, and the AI surface; commands start them.
export const typedWorkflow = workflow({
  args: { orderId: z.uuid() },
  handler: async (ctx, args) => {
    const charge = await ctx.step('charge', async ({ idempotencyKey }) => ({ chargeId: `${idempotencyKey}:${args.orderId}` }));
    const id: string = charge.chargeId;
    const attempt: number = ctx.run.attempt;
    // @ts-expect-error a step's result keeps its type
    const wrong: number = charge.chargeId;
    await ctx.ai.generateText({ prompt: 'hi' });
    return { id, attempt, wrong };
  },
});
export const startsWorkflow = command({
  handler: async (ctx) => {
    const { runId } = await ctx.startWorkflow('typedWorkflow', { orderId: crypto.randomUUID() }, { idempotencyKey: 'k' });
    const id: string = runId;
    return id;
  },
});
export const noStartInQuery = query({
  // @ts-expect-error queries cannot start workflows (they run read-only)
  handler: (ctx) => ctx.startWorkflow('typedWorkflow', {}),
});
export const noStepInAction = action({
  // @ts-expect-error steps belong to workflows
  handler: (ctx) => ctx.step('x', () => 1),
});
