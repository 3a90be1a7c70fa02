import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type LiveTestRuntime, openEventStream, serveLiveRuntime } from '../../e2e/support/live-server.ts';
import { databaseTargets, openTestDatabase } from '../../e2e/support/postgres.ts';
import type { FwDatabase } from '../db/database.ts';
import { applyMigration } from '../db/migrate.ts';
import { command, liveQuery } from '../core/entries.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { defineSchema, t, table } from '../core/schema.ts';

/**
 * A command asked for its live revisions (`x-fw-live-revision: 1`, what the client sends for an
 * optimistic update) answers the tokens of the log rows its transaction wrote, as the caller's live
 * streams show them: the snapshot its write caused carries one of them.
 */
const schema = defineSchema({
  notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text() }),
  tags: table({ id: t.uuid().primaryKey().defaultRandom(), name: t.text() }),
});

function testApp(): AppDefinition {
  const entries = {
    addNote: command({
      args: { title: z.string(), tag: z.string().optional() },
      handler: async (ctx, args) => {
        await ctx.db.insertInto('notes').values({ title: args.title }).execute();
        if (args.tag) await ctx.db.insertInto('tags').values({ name: args.tag }).execute();
        return 'ok';
      },
    }),
    nothing: command({ handler: () => 'ok' }),
    notes: liveQuery({ handler: (ctx) => ctx.db.selectFrom('notes').select('title').orderBy('title').execute() }),
  };
  return { entries: new Map(Object.entries(entries)), policies: {}, schema };
}

for (const target of databaseTargets) {
  describe.skipIf(!target.enabled)(`command live revisions (${target.name})`, () => {
    let db: FwDatabase;
    let runtime: LiveTestRuntime;
    let drop = async () => {};

    beforeAll(async () => {
      ({ db, drop } = await openTestDatabase(target));
      const app = testApp();
      await applyMigration(db, app.schema);
      runtime = await serveLiveRuntime(app, db, { pollIntervalMs: 100, safetyPollIntervalMs: 600_000 });
    });

    afterAll(async () => {
      await runtime?.close();
      await db?.close();
      await drop();
    });

    const headers = () => ({ 'x-fw-user-id': 'u1', 'x-fw-tenant-id': randomUUID(), 'x-fw-role': 'member', 'content-type': 'application/json' });
    const call = async (name: string, args: unknown, callerHeaders: Record<string, string>) => {
      const response = await fetch(`${runtime.url}/commands/${name}`, { method: 'POST', headers: callerHeaders, body: JSON.stringify({ args }) });
      return response.json();
    };

    it('answers the tokens only when asked, and the snapshot of the write carries one of them', async () => {
      const caller = headers();
      const stream = await openEventStream(`${runtime.url}/live/notes`, { headers: caller });
      try {
        expect((await stream.next()).json.result).toEqual([]);
        const plain = await call('addNote', { title: 'a' }, caller);
        expect(Object.keys(plain).sort()).toEqual(['ok', 'result', 'traceId']);
        await stream.next();

        const asked = await call('addNote', { title: 'b', tag: 't' }, { ...caller, 'x-fw-live-revision': '1' });
        // One log row per table written: notes and tags.
        expect(asked.liveRevisions).toHaveLength(2);
        const snapshot = await stream.next();
        expect(snapshot.json.result).toEqual([{ title: 'a' }, { title: 'b' }]);
        expect(asked.liveRevisions).toContain(snapshot.json.revision);
        // It lists the write that woke its run (the notes row; the tags row concerns no subscriber).
        expect(snapshot.json.covers).toHaveLength(1);
        expect(asked.liveRevisions).toContain(snapshot.json.covers[0]);

        expect((await call('nothing', {}, { ...caller, 'x-fw-live-revision': '1' })).liveRevisions).toEqual([]);
      } finally {
        stream.close();
      }
    });

  });
}
