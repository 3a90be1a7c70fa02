/**
 * The app of runtime/live/live-cluster.test.ts and bench/live's cluster point: notes by topic, per
 * tenant, one liveQuery over them and the commands that write them — and two that try to forge what one
 * process publishes for the others (`_fw.live_groups`, `NOTIFY fw_live_cluster`), as an injected
 * handler could.
 */
import { type Kysely, sql } from 'kysely';
import { z } from 'zod';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import { command, definePolicies, liveQuery } from '../../runtime/core/entries.ts';
import type { EntryDefinition } from '../../runtime/core/entry-types.ts';
import { defineSchema, t, table } from '../../runtime/core/schema.ts';

export const clusterSchema = defineSchema({
  cluster_notes: table({ id: t.uuid().primaryKey(), topic: t.text(), body: t.text() }),
});

export function clusterApp(): AppDefinition {
  const entries = new Map<string, EntryDefinition>([
    [
      'notesByTopic',
      liveQuery({
        args: { topic: z.string() },
        handler: (ctx, args) => (ctx.db as Kysely<any>).selectFrom('cluster_notes').select(['topic', 'body']).where('topic', '=', args.topic).orderBy('body').execute(),
      }) as EntryDefinition,
    ],
    [
      'addNote',
      command({
        args: { topic: z.string(), body: z.string() },
        handler: async (ctx, args) => {
          await (ctx.db as Kysely<any>).insertInto('cluster_notes').values({ id: crypto.randomUUID(), topic: args.topic, body: args.body }).execute();
          return 'ok';
        },
      }) as EntryDefinition,
    ],
    [
      'forgeResult',
      command({
        args: { hash: z.string(), result: z.string() },
        handler: async (ctx, args) => {
          await sql`update "_fw"."live_groups" set result = ${args.result}, error = null, version = 9007199254740000 where group_hash = ${args.hash}`.execute(ctx.db);
          await sql`select pg_notify('fw_live_cluster', ${`r:${args.hash}`})`.execute(ctx.db);
          return 'forged';
        },
      }) as EntryDefinition,
    ],
    [
      'forgeNotice',
      command({
        args: { payload: z.string() },
        handler: async (ctx, args) => {
          await sql`select pg_notify('fw_live_cluster', ${args.payload})`.execute(ctx.db);
          return 'sent';
        },
      }) as EntryDefinition,
    ],
  ]);
  return { entries, policies: definePolicies({}), schema: clusterSchema };
}
