/**
 * `ctx.now()` in every kind's ctx reads the runtime's clock (EntryServices.clock, which fwjs/testing's
 * advanceTime moves), not the system time; without one it is the system time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import type { Clock } from '../core/clock.ts';
import { action, command, endpoint, liveQuery, query, workflow } from '../core/entries.ts';
import { defineSchema } from '../core/schema.ts';
import { z } from 'zod';
import type { FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { type EntryServices, type Invocable, runAdmitted } from './pipeline.ts';

const stamp = (ctx: { now(): Date }) => ctx.now().toISOString();
const entries = {
  aCommand: command({ handler: stamp }),
  aQuery: query({ handler: stamp }),
  aLiveQuery: liveQuery({ handler: stamp }),
  anEndpoint: endpoint({ method: 'GET', path: '/api/now', handler: stamp }),
  anAction: action({ on: 'some.event', handler: stamp }),
  aWorkflow: workflow({ on: 'some.event', handler: stamp }),
};
// An agent's aiTools, as tool-set.ts hands them to the pipeline: a `read` tool and a writing one.
const tools = {
  aReadTool: { kind: 'aiTool', policy: 'user', args: z.object({}), handler: stamp, readOnly: true },
  aWriteTool: { kind: 'aiTool', policy: 'user', args: z.object({}), handler: stamp, readOnly: false },
} satisfies Record<string, Invocable>;

describe('ctx.now()', () => {
  let db: FwDatabase;
  let drop = async () => {};
  const app: AppDefinition = { entries: new Map(Object.entries(entries)), schema: defineSchema({}) } as AppDefinition;
  let time = Date.parse('2030-01-02T03:04:05.678Z');
  const clock: Clock = { now: () => time, at: () => () => {} };

  beforeAll(async () => {
    ({ db, drop } = await openTestDatabase(databaseTargets[0]));
    await applyMigration(db, app.schema);
  });
  afterAll(async () => {
    await db?.close();
    await drop();
  });

  const run = (services: EntryServices, name: keyof typeof entries | keyof typeof tools) =>
    runAdmitted(services, name in tools ? tools[name as keyof typeof tools] : (entries[name as keyof typeof entries] as unknown as Invocable), {
      name,
      external: false,
      auth: { kind: 'user', userId: 'u1', tenantId: '00000000-0000-4000-8000-000000000001', role: 'member' },
      traceId: 'trace-now',
      context: {},
    }, {});

  it('is the runtime clock in every kind, and moves with it', async () => {
    const services: EntryServices = { app, db, clock };
    for (const name of [...Object.keys(entries), ...Object.keys(tools)] as (keyof typeof entries | keyof typeof tools)[]) {
      time = Date.parse('2030-01-02T03:04:05.678Z');
      expect([name, await run(services, name)]).toEqual([name, '2030-01-02T03:04:05.678Z']);
      time += 8 * 86_400_000;
      expect([name, await run(services, name)]).toEqual([name, '2030-01-10T03:04:05.678Z']);
    }
  });

  it('is the system time without an injected clock', async () => {
    const before = Date.now();
    const at = Date.parse((await run({ app, db }, 'aQuery')) as string);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
  });
});
