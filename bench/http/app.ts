/**
 * What every variant serves: the `notes` table of templates/minimal-web, its `listNotes` query and
 * `createNote` command, the benchmark caller and the requests the load generator sends.
 */
import { sql } from 'kysely';
import { z } from 'zod';
import type { FwDatabase } from '../../runtime/db/database.ts';
import { applyMigration } from '../../runtime/db/migrate.ts';
import { command, query } from '../../runtime/core/entries.ts';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import { type Database, defineSchema, t, table } from '../../runtime/core/schema.ts';

export const schema = defineSchema({
  notes: table(
    {
      id: t.uuid().primaryKey().defaultRandom(),
      title: t.text(),
      body: t.text().nullable(),
      author_id: t.text(),
      created_at: t.timestamptz().defaultNow(),
    },
    { indexes: [{ columns: ['created_at'] }] },
  ),
});

export type BenchDatabase = Database<typeof schema>;

/** The caller of every benchmark request (and the tenant whose notes are listed). */
export const BENCH_USER = 'bench-user';
export const BENCH_TENANT = '00000000-0000-4000-8000-0000000000b1';
/** A second tenant with as many notes, so row-level security (or the bare `where`) has rows to exclude. */
export const OTHER_TENANT = '00000000-0000-4000-8000-0000000000b2';
export const SEED_NOTES_PER_TENANT = 50;
/** One page of notes, newest first, in every variant. */
export const LIST_LIMIT = 50;
/** The request transaction's `statement_timeout`, as fw's default. */
export const STATEMENT_TIMEOUT_MS = 30_000;

/** The args of `createNote`, exactly as in the template. */
export const createNoteArgs = {
  title: z.string().trim().min(1).max(200),
  body: z.string().max(10_000).optional(),
};

/** (a): the app as fw loads it, with the template's entries defined inline. */
export function benchApp(): AppDefinition {
  const entries = {
    createNote: command({
      policy: 'user',
      args: createNoteArgs,
      handler: (ctx, args) =>
        ctx.db
          .insertInto('notes')
          .values({ title: args.title, body: args.body ?? null, author_id: ctx.auth.userId! })
          .returningAll()
          .executeTakeFirstOrThrow(),
    }),
    listNotes: query({
      policy: 'user',
      // Row-level security limits this to the caller's tenant; no tenant filter needed.
      handler: (ctx) =>
        ctx.db.selectFrom('notes').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(LIST_LIMIT).execute(),
    }),
  };
  return { entries: new Map(Object.entries(entries)), policies: {}, schema };
}

export const devHeaders = {
  'content-type': 'application/json',
  'x-fw-user-id': BENCH_USER,
  'x-fw-tenant-id': BENCH_TENANT,
} as const;

/** The HTTP request of each entry, identical for every variant. */
export const benchRequests = {
  listNotes: { path: '/queries/listNotes', body: JSON.stringify({ args: {} }) },
  createNote: {
    path: '/commands/createNote',
    body: JSON.stringify({ args: { title: 'Benchmark note', body: 'Written under load by bench/http.' } }),
  },
} as const;

/**
 * Creates the table through fw's migration engine (so every variant hits the same table, with RLS)
 * and seeds both tenants. `db` is fw's database handle; the seed runs as the owner, bypassing RLS.
 */
export async function prepareBenchDatabase(db: FwDatabase): Promise<void> {
  const migration = await applyMigration(db, schema);
  if (migration.blocked.length > 0) {
    throw new Error(`bench/http: migration blocked: ${migration.blocked.map((d) => d.message).join('; ')}`);
  }
  const rows = [BENCH_TENANT, OTHER_TENANT].flatMap((tenant, t) =>
    Array.from({ length: SEED_NOTES_PER_TENANT }, (_, i) => ({
      title: `Seed note ${i + 1}`,
      body: `Body of seed note ${i + 1}: a sentence or two, about the length of a short note somebody would actually write.`,
      author_id: BENCH_USER,
      tenant_id: tenant,
      created_at: new Date(Date.UTC(2025, 0, 1, 0, 0, i * 2 + t)),
    })),
  );
  await db.admin.insertInto('notes').values(rows).execute();
  await sql`analyze notes`.execute(db.admin);
}
