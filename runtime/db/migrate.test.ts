import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Auth } from '../core/entry-types.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { APP_ROLE, createDatabase, type FwDatabase } from './database.ts';
import { applyMigration, ensureSystemTables, migrationStatus, planMigration } from './migrate.ts';
import { requestLoginRole } from './request-login.ts';
import { enqueueInTransaction } from './outbox.ts';

const url = process.env.FW_TEST_DATABASE_URL;
if (!url) console.warn('migrate.test.ts: FW_TEST_DATABASE_URL is not set, so the PostgreSQL suite is skipped (PGlite runs).');

interface Environment {
  db: FwDatabase;
  /** A second, independent database handle (another "process"), where the target supports one. */
  another(): Promise<FwDatabase>;
  close(): Promise<void>;
}

interface Target {
  name: string;
  skip: boolean;
  open(): Promise<Environment>;
}

const targets: Target[] = [
  {
    name: 'PGlite',
    skip: false,
    async open() {
      const db = await createDatabase({ dataDir: 'memory://' });
      return { db, another: async () => db, close: () => db.close() };
    },
  },
  {
    name: 'PostgreSQL',
    skip: !url,
    async open() {
      // A database of its own, so parallel test files never meet.
      const name = `fw_t_${randomBytes(6).toString('hex')}`;
      await withServer(url!, (client) => client.query(`create database ${name}`));
      const target = new URL(url!);
      target.pathname = `/${name}`;
      const db = await createDatabase({ url: target.toString() });
      const others: FwDatabase[] = [];
      return {
        db,
        async another() {
          const other = await createDatabase({ url: target.toString() });
          others.push(other);
          return other;
        },
        async close() {
          for (const other of others) await other.close();
          await db.close();
          await withServer(url!, async (client) => {
      await client.query(`drop database if exists ${name} with (force)`);
      await client.query(`drop role if exists ${requestLoginRole(name)}`);
    });
        },
      };
    },
  },
];

async function withServer(connectionString: string, fn: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await fn(client);
  } finally {
    await client.end();
  }
}

const tenantA = '11111111-1111-4111-8111-111111111111';
const tenantB = '22222222-2222-4222-8222-222222222222';
const as = (tenantId: string | null): Auth => ({ kind: 'user', userId: 'u1', tenantId, role: null });
const shared = { tenantScoped: false } as const;

for (const target of targets) {
  describe.skipIf(target.skip)(`migrations on ${target.name}`, () => {
    let env: Environment;
    let db: FwDatabase;

    beforeAll(async () => {
      env = await target.open();
      db = env.db;
    }, 60_000);

    afterAll(async () => {
      await env?.close();
    });

    beforeEach(async () => {
      await sql.raw(`drop schema public cascade; create schema public; grant usage on schema public to ${APP_ROLE}`).execute(db.admin);
    });

    const columnsOf = async (tableName: string) => {
      const result = await sql<{ column_name: string; udt_name: string; is_nullable: string; column_default: string | null }>`
        select column_name, udt_name, is_nullable, column_default from information_schema.columns
        where table_schema = 'public' and table_name = ${tableName} order by ordinal_position`.execute(db.admin);
      return Object.fromEntries(result.rows.map((r) => [r.column_name, { type: r.udt_name, nullable: r.is_nullable === 'YES', default: r.column_default }]));
    };
    const tableExists = async (name: string) =>
      (await sql<{ ok: boolean }>`select to_regclass(${`public.${name}`}) is not null as ok`.execute(db.admin)).rows[0]!.ok;
    const enumLabels = async (type: string) =>
      (await sql<{ label: string }>`select e.enumlabel as label from pg_enum e join pg_type t on t.oid = e.enumtypid where t.typname = ${type} order by e.enumsortorder`.execute(db.admin)).rows.map((r) => r.label);
    /** The unique constraints of a table, by name, with their columns in order. */
    const constraintColumns = async (tableName: string) =>
      Object.fromEntries(
        (
          await sql<{ name: string; columns: string[] }>`
            select con.conname as name, array(select a.attname::text from unnest(con.conkey) with ordinality k(n, i) join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.n order by k.i) as columns
            from pg_constraint con where con.conrelid = ${`public.${tableName}`}::regclass and con.contype = 'u' order by con.conname`.execute(db.admin)
        ).rows.map((r) => [r.name, r.columns]),
      );
    const foreignKeys = async (tableName: string) =>
      Object.fromEntries(
        (
          await sql<{ name: string; def: string }>`
            select conname as name, pg_get_constraintdef(oid) as def from pg_constraint
            where conrelid = ${`public.${tableName}`}::regclass and contype = 'f' order by conname`.execute(db.admin)
        ).rows.map((r) => [r.name, r.def]),
      );
    const migrationRows = async () => Number((await sql<{ n: number }>`select count(*)::int as n from _fw_migrations`.execute(db.admin)).rows[0]!.n);
    const expectNothingPending = async (schema: Parameters<typeof planMigration>[1]) => {
      const plan = await planMigration(db, schema);
      expect(plan.blocked).toEqual([]);
      expect(plan.changes.map((c) => c.description)).toEqual([]);
    };

    it('creates every column kind, enum, reference, index and tenant table, after which nothing is pending', async () => {
      const schema = defineSchema({
        users: table({ id: t.uuid().defaultRandom().primaryKey(), email: t.text().unique(), name: t.text().nullable() }, shared),
        notes: table(
          {
            id: t.uuid().defaultRandom().primaryKey(),
            title: t.text(),
            body: t.text().nullable(),
            views: t.integer().default(0),
            big: t.bigint().default('9007199254740993'),
            price: t.numeric().default('1.50'),
            pinned: t.boolean().default(false),
            createdAt: t.timestamptz().defaultNow(),
            due: t.date().default(new Date('2024-02-29T00:00:00Z')),
            meta: t.jsonb<{ tags: string[] }>().default({ tags: ["it's"] }),
            status: t.enum(['open', 'closed']).default('open'),
            authorId: t.uuid().references('users', 'id', { onDelete: 'cascade' }).nullable(),
          },
          { indexes: [{ columns: ['status'] }, { columns: ['title', 'authorId'], unique: true }] },
        ),
      });
      const result = await applyMigration(db, schema);
      expect(result.blocked).toEqual([]);
      expect(result.migrationId).toBeTypeOf('number');
      expect(result.applied.map((c) => `${c.kind} ${c.table}`)).toEqual([
        'create_enum notes',
        'create_table users',
        'create_table notes',
        'enable_tenant_policy notes',
        'enable_identity_policy users',
        'create_index notes',
        'create_index notes',
        'create_index notes',
      ]);

      const columns = await columnsOf('notes');
      expect(Object.fromEntries(Object.entries(columns).map(([name, c]) => [name, c.type]))).toEqual({
        id: 'uuid', title: 'text', body: 'text', views: 'int4', big: 'int8', price: 'numeric', pinned: 'bool',
        createdAt: 'timestamptz', due: 'date', meta: 'jsonb', status: 'notes_status', authorId: 'uuid', tenant_id: 'uuid',
      });
      expect(columns.body!.nullable).toBe(true);
      expect(columns.title!.nullable).toBe(false);
      expect(columns.tenant_id!.nullable).toBe(false);
      expect(await enumLabels('notes_status')).toEqual(['open', 'closed']);
      const indexes = await sql<{ indexname: string; indexdef: string }>`select indexname, indexdef from pg_indexes where schemaname = 'public' and tablename = 'notes' order by indexname`.execute(db.admin);
      expect(indexes.rows.map((r) => r.indexname)).toEqual(['notes_pkey', 'notes_status_idx', 'notes_tenant_id_idx', 'notes_title_authorId_key']);
      expect(indexes.rows.find((r) => r.indexname === 'notes_title_authorId_key')!.indexdef).toMatch(/CREATE UNIQUE INDEX/);
      const security = await sql<{ relrowsecurity: boolean; relforcerowsecurity: boolean }>`select relrowsecurity, relforcerowsecurity from pg_class where oid = 'public.notes'::regclass`.execute(db.admin);
      expect(security.rows[0]).toEqual({ relrowsecurity: true, relforcerowsecurity: true });
      const fk = await sql<{ def: string }>`select pg_get_constraintdef(oid) as def from pg_constraint where conname = 'notes_authorId_fkey'`.execute(db.admin);
      expect(fk.rows[0]!.def).toMatch(/REFERENCES (public\.)?users\(id\) ON DELETE CASCADE/);

      // Defaults work as declared, and the app role may write.
      const row = await db.transaction({ readOnly: false, auth: as(tenantA) }, (trx) =>
        trx.insertInto('notes').values({ title: 'hello' }).returningAll().executeTakeFirstOrThrow(),
      );
      expect(row).toMatchObject({ views: 0, big: '9007199254740993', price: '1.50', pinned: false, meta: { tags: ["it's"] }, status: 'open', tenant_id: tenantA, body: null });
      expect(row.createdAt).toBeInstanceOf(Date);

      await expectNothingPending(schema);
      const again = await applyMigration(db, schema);
      expect(again).toEqual({ applied: [], blocked: [], migrationId: null });
      expect(await migrationRows()).toBe(1);
    });

    it('creates tables that reference each other', async () => {
      const schema = defineSchema({
        a: table({ id: t.uuid().defaultRandom().primaryKey(), bId: t.uuid().nullable().references('b') }, shared),
        b: table({ id: t.uuid().defaultRandom().primaryKey(), aId: t.uuid().nullable().references('a', 'id', { onDelete: 'set null' }) }, shared),
      });
      expect((await applyMigration(db, schema)).blocked).toEqual([]);
      await expectNothingPending(schema);
    });

    it('adds columns to a table that has rows and keeps the data', async () => {
      const v1 = defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text() }, shared) });
      await applyMigration(db, v1);
      await db.admin.insertInto('notes').values([{ title: 'one' }, { title: 'two' }]).execute();
      const v2 = defineSchema({
        notes: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text(), body: t.text().nullable(), views: t.integer().default(7), createdAt: t.timestamptz().defaultNow() }, shared),
      });
      const plan = await planMigration(db, v2);
      expect(plan.blocked).toEqual([]);
      expect(plan.changes.map((c) => `${c.kind} ${c.table}.${c.column}`)).toEqual(['add_column notes.body', 'add_column notes.views', 'add_column notes.createdAt']);
      const result = await applyMigration(db, v2);
      expect(result.applied).toHaveLength(3);
      const rows = await db.admin.selectFrom('notes').select(['title', 'body', 'views']).orderBy('title').execute();
      expect(rows).toEqual([{ title: 'one', body: null, views: 7 }, { title: 'two', body: null, views: 7 }]);
      await expectNothingPending(v2);
    });

    it('refuses to drop a column, and drops it with acceptDataLoss', async () => {
      const v1 = defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text(), body: t.text().nullable() }, shared) });
      await applyMigration(db, v1);
      await db.admin.insertInto('notes').values({ title: 't', body: 'keep me' }).execute();
      const v2 = defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text() }, shared) });

      const refused = await applyMigration(db, v2);
      expect(refused.applied).toEqual([]);
      expect(refused.migrationId).toBeNull();
      expect(refused.blocked).toHaveLength(1);
      expect(refused.blocked[0]).toMatchObject({ code: 'drop_column', path: 'schema.notes.body' });
      expect(refused.blocked[0]!.hint).toMatch(/--accept-data-loss/);
      expect(await db.admin.selectFrom('notes').select('body').execute()).toEqual([{ body: 'keep me' }]);

      const plan = await planMigration(db, v2, { acceptDataLoss: true });
      expect(plan.blocked).toEqual([]);
      expect(plan.changes).toMatchObject([{ kind: 'drop_column', table: 'notes', column: 'body', destructive: true }]);
      const dropped = await applyMigration(db, v2, { acceptDataLoss: true });
      expect(dropped.applied.map((c) => c.kind)).toEqual(['drop_column']);
      expect(Object.keys(await columnsOf('notes'))).toEqual(['id', 'title']);
      await expectNothingPending(v2);
    });

    it('refuses to drop a table unless data loss is accepted, and drops its enum type with it', async () => {
      const v1 = defineSchema({
        keep: table({ id: t.uuid().defaultRandom().primaryKey() }, shared),
        old: table({ id: t.uuid().defaultRandom().primaryKey(), state: t.enum(['a', 'b']) }, shared),
      });
      await applyMigration(db, v1);
      const v2 = defineSchema({ keep: table({ id: t.uuid().defaultRandom().primaryKey() }, shared) });
      const refused = await applyMigration(db, v2);
      expect(refused.blocked).toMatchObject([{ code: 'drop_table', path: 'schema.old' }]);
      const renamed = await planMigration(db, defineSchema({ ...v2.tables, fresh: table({ id: t.uuid().defaultRandom().primaryKey() }, shared) }));
      expect(renamed.blocked).toMatchObject([{ code: 'possible_rename', path: 'schema.old' }]);
      expect(renamed.blocked[0]!.message).toContain('"fresh"');
      expect(await tableExists('old')).toBe(true);
      const dropped = await applyMigration(db, v2, { acceptDataLoss: true });
      expect(dropped.applied).toMatchObject([{ kind: 'drop_table', table: 'old', destructive: true }]);
      expect(await tableExists('old')).toBe(false);
      expect(await enumLabels('old_state')).toEqual([]);
      await expectNothingPending(v2);
    });

    it('refuses a column type change', async () => {
      const v1 = defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), count: t.integer() }, shared) });
      await applyMigration(db, v1);
      const v2 = defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), count: t.text() }, shared) });
      const result = await applyMigration(db, v2);
      expect(result.applied).toEqual([]);
      expect(result.blocked).toMatchObject([{ code: 'column_type_change', path: 'schema.notes.count' }]);
      expect(result.blocked[0]!.message).toMatch(/integer/);
      expect((await columnsOf('notes')).count!.type).toBe('int4');
    });

    it('adds a NOT NULL column without default only to an empty table', async () => {
      const v1 = defineSchema({
        full: table({ id: t.uuid().defaultRandom().primaryKey() }, shared),
        empty: table({ id: t.uuid().defaultRandom().primaryKey() }, shared),
      });
      await applyMigration(db, v1);
      await db.admin.insertInto('full').defaultValues().execute();
      const v2 = defineSchema({
        full: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text() }, shared),
        empty: table({ id: t.uuid().defaultRandom().primaryKey() }, shared),
      });
      const refused = await applyMigration(db, v2);
      expect(refused.blocked).toMatchObject([{ code: 'not_null_without_default', path: 'schema.full.title' }]);
      expect(refused.blocked[0]!.hint).toMatch(/default/);
      expect(Object.keys(await columnsOf('full'))).toEqual(['id']);

      const v3 = defineSchema({
        full: table({ id: t.uuid().defaultRandom().primaryKey() }, shared),
        empty: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text() }, shared),
      });
      const applied = await applyMigration(db, v3);
      expect(applied.blocked).toEqual([]);
      expect(applied.applied).toMatchObject([{ kind: 'add_column', table: 'empty', column: 'title' }]);
      expect((await columnsOf('empty')).title).toMatchObject({ type: 'text', nullable: false });
      await expectNothingPending(v3);
    });

    it('appends and inserts enum values, and refuses removing or reordering them', async () => {
      const withValues = (values: readonly [string, ...string[]], fallback?: string) =>
        defineSchema({
          tickets: table({ id: t.uuid().defaultRandom().primaryKey(), status: fallback ? t.enum(values).default(fallback) : t.enum(values) }, shared),
        });
      await applyMigration(db, withValues(['open', 'closed']));
      await db.admin.insertInto('tickets').values({ status: 'closed' }).execute();

      const appended = await applyMigration(db, withValues(['open', 'closed', 'archived']));
      expect(appended.applied).toMatchObject([{ kind: 'add_enum_value', table: 'tickets', column: 'status' }]);
      expect(await enumLabels('tickets_status')).toEqual(['open', 'closed', 'archived']);
      await db.admin.insertInto('tickets').values({ status: 'archived' }).execute();

      await applyMigration(db, withValues(['draft', 'open', 'pending', 'closed', 'archived']));
      expect(await enumLabels('tickets_status')).toEqual(['draft', 'open', 'pending', 'closed', 'archived']);
      await expectNothingPending(withValues(['draft', 'open', 'pending', 'closed', 'archived']));

      const removed = await applyMigration(db, withValues(['draft', 'open', 'pending', 'archived']));
      expect(removed.blocked).toMatchObject([{ code: 'enum_value_removed', path: 'schema.tickets.status' }]);
      expect(removed.blocked[0]!.message).toContain('"closed"');
      const reordered = await planMigration(db, withValues(['draft', 'pending', 'open', 'closed', 'archived', 'new']));
      expect(reordered.blocked).toMatchObject([{ code: 'enum_values_reordered', path: 'schema.tickets.status' }]);
      expect(await enumLabels('tickets_status')).toEqual(['draft', 'open', 'pending', 'closed', 'archived']);

      // A default that uses a value added by the same migration (PostgreSQL needs the value committed first).
      const final = withValues(['draft', 'open', 'pending', 'closed', 'archived', 'spam'], 'spam');
      const result = await applyMigration(db, final);
      expect(result.blocked).toEqual([]);
      expect(result.applied.map((c) => c.kind)).toEqual(['add_enum_value', 'set_default']);
      await db.admin.insertInto('tickets').defaultValues().execute();
      expect(await db.admin.selectFrom('tickets').select('status').where('status', '=', 'spam').execute()).toHaveLength(1);
      await expectNothingPending(final);
    });

    it('changes defaults and drops NOT NULL', async () => {
      const v = (views: ReturnType<typeof t.integer> | ReturnType<ReturnType<typeof t.integer>['default']> | ReturnType<ReturnType<typeof t.integer>['nullable']>) =>
        defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), views }, shared) });
      await applyMigration(db, v(t.integer().default(0)));

      const changed = await applyMigration(db, v(t.integer().default(5)));
      expect(changed.applied).toMatchObject([{ kind: 'set_default', table: 'notes', column: 'views' }]);
      await db.admin.insertInto('notes').defaultValues().execute();
      expect(await db.admin.selectFrom('notes').select('views').execute()).toEqual([{ views: 5 }]);
      await expectNothingPending(v(t.integer().default(5)));

      const dropped = await applyMigration(db, v(t.integer()));
      expect(dropped.applied.map((c) => c.kind)).toEqual(['drop_default']);
      expect((await columnsOf('notes')).views!.default).toBeNull();

      const nullable = await applyMigration(db, v(t.integer().nullable()));
      expect(nullable.applied.map((c) => c.kind)).toEqual(['drop_not_null']);
      expect((await columnsOf('notes')).views!.nullable).toBe(true);
      await expectNothingPending(v(t.integer().nullable()));

      const tightened = await planMigration(db, v(t.integer().default(1)));
      expect(tightened.blocked).toMatchObject([{ code: 'column_set_not_null', path: 'schema.notes.views' }]);
    });

    it('says a dropped column next to a new one may be a rename, and applies nothing', async () => {
      const v1 = defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text() }, shared) });
      await applyMigration(db, v1);
      const v2 = defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), heading: t.text().nullable() }, shared) });
      const result = await applyMigration(db, v2);
      expect(result.applied).toEqual([]);
      expect(result.blocked).toHaveLength(1);
      expect(result.blocked[0]).toMatchObject({ code: 'possible_rename', path: 'schema.notes.title' });
      expect(result.blocked[0]!.message).toMatch(/rename/);
      expect(result.blocked[0]!.message).toContain('notes.heading');
      expect(result.blocked[0]!.hint).toMatch(/copy the data.*--accept-data-loss/);
      expect(Object.keys(await columnsOf('notes'))).toEqual(['id', 'title']);
    });

    it('applies nothing when one change among additive ones is refused', async () => {
      const v1 = defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text() }, shared) });
      await applyMigration(db, v1);
      const v2 = defineSchema({
        notes: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.integer(), body: t.text().nullable() }, { tenantScoped: false, indexes: [{ columns: ['body'] }] }),
        tags: table({ id: t.uuid().defaultRandom().primaryKey(), label: t.enum(['x', 'y']) }, shared),
      });
      const plan = await planMigration(db, v2);
      expect(plan.changes.map((c) => c.kind)).toEqual(['create_enum', 'create_table', 'add_column', 'enable_identity_policy', 'create_index']);
      expect(plan.blocked).toMatchObject([{ code: 'column_type_change', path: 'schema.notes.title' }]);

      const result = await applyMigration(db, v2);
      expect(result).toMatchObject({ applied: [], migrationId: null });
      expect(result.blocked).toHaveLength(1);
      expect(await tableExists('tags')).toBe(false);
      expect(await enumLabels('tags_label')).toEqual([]);
      expect(Object.keys(await columnsOf('notes'))).toEqual(['id', 'title']);
      expect(await migrationRows()).toBe(1);
    });

    it('refuses changed foreign keys, unique constraints and tenant scoping', async () => {
      const v1 = defineSchema({
        users: table({ id: t.uuid().defaultRandom().primaryKey(), email: t.text() }, shared),
        notes: table({ id: t.uuid().defaultRandom().primaryKey(), authorId: t.uuid().references('users') }),
      });
      await applyMigration(db, v1);
      const v2 = defineSchema({
        users: table({ id: t.uuid().defaultRandom().primaryKey(), email: t.text().unique() }, shared),
        notes: table({ id: t.uuid().defaultRandom().primaryKey(), authorId: t.uuid().references('users', 'id', { onDelete: 'cascade' }) }, shared),
      });
      const plan = await planMigration(db, v2);
      expect(plan.blocked.map((d) => `${d.code} ${d.path}`).sort()).toEqual([
        'foreign_key_change schema.notes.authorId',
        'tenant_scope_change schema.notes',
        'unique_change schema.users.email',
      ]);
    });

    it('adds and drops declared indexes but leaves hand-made ones alone', async () => {
      const v = (indexes: Array<{ columns: ['title'] | ['title', 'body']; unique?: boolean }>) =>
        defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text(), body: t.text() }, { tenantScoped: false, indexes }) });
      await applyMigration(db, v([]));
      await sql`create index notes_by_hand on notes (body)`.execute(db.admin);
      const added = await applyMigration(db, v([{ columns: ['title', 'body'], unique: true }]));
      expect(added.applied).toMatchObject([{ kind: 'create_index', table: 'notes' }]);
      await expectNothingPending(v([{ columns: ['title', 'body'], unique: true }]));
      const removed = await applyMigration(db, v([]));
      expect(removed.applied.map((c) => c.description)).toEqual(['drop index notes_title_body_key (no longer declared)']);
      const left = await sql<{ indexname: string }>`select indexname from pg_indexes where tablename = 'notes' order by indexname`.execute(db.admin);
      expect(left.rows.map((r) => r.indexname)).toEqual(['notes_by_hand', 'notes_pkey']);
    });

    it('reports a schema that cannot be built', async () => {
      const schema = defineSchema({ notes: table({ id: t.uuid().primaryKey(), authorId: t.uuid().references('people') }, shared) });
      const result = await applyMigration(db, schema);
      expect(result.applied).toEqual([]);
      expect(result.blocked).toMatchObject([{ code: 'invalid_reference', path: 'schema.notes.authorId' }]);
      expect(await tableExists('notes')).toBe(false);
      const clash = defineSchema({ notes: table({ id: t.uuid().primaryKey(), email: t.text().unique() }, { tenantScoped: false, indexes: [{ columns: ['email'], unique: true }] }) });
      expect((await planMigration(db, clash)).blocked).toMatchObject([{ code: 'name_clash', path: 'schema.notes.indexes[0]' }]);
      // What only PostgreSQL can tell (here: a default the column type rejects) is reported too.
      const rejected = defineSchema({ notes: table({ id: t.uuid().primaryKey().default('not-a-uuid') }, shared) });
      expect((await planMigration(db, rejected)).blocked).toMatchObject([{ code: 'invalid_schema', path: 'schema.notes' }]);
      expect(await tableExists('notes')).toBe(false);
    });

    it('isolates tenants with row-level security on a created tenant table', async () => {
      const schema = defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text() }) });
      await applyMigration(db, schema);
      await db.transaction({ readOnly: false, auth: as(tenantA) }, (trx) => trx.insertInto('notes').values({ title: 'a' }).execute());
      await db.transaction({ readOnly: false, auth: as(tenantB) }, (trx) => trx.insertInto('notes').values([{ title: 'b1' }, { title: 'b2' }]).execute());
      const seenBy = (tenant: string | null) =>
        db.transaction({ readOnly: true, auth: as(tenant) }, async (trx) => (await trx.selectFrom('notes').select('title').orderBy('title').execute()).map((r) => r.title));
      expect(await seenBy(tenantA)).toEqual(['a']);
      expect(await seenBy(tenantB)).toEqual(['b1', 'b2']);
      expect(await seenBy(null)).toEqual([]);
      // Neither writing into another tenant nor touching its rows is possible.
      await expect(
        db.transaction({ readOnly: false, auth: as(tenantA) }, (trx) => trx.insertInto('notes').values({ title: 'x', tenant_id: tenantB }).execute()),
      ).rejects.toMatchObject({ code: '42501' });
      const deleted = await db.transaction({ readOnly: false, auth: as(tenantA) }, (trx) => trx.deleteFrom('notes').executeTakeFirst());
      expect(deleted.numDeletedRows).toBe(1n);
      expect(await seenBy(tenantB)).toEqual(['b1', 'b2']);
    });

    it('makes unique columns and unique indexes of a tenant table unique within each tenant: no tenant learns of another\'s values', async () => {
      const schema = defineSchema({
        users: table({ id: t.uuid().defaultRandom().primaryKey(), email: t.text().unique(), handle: t.text() }, { indexes: [{ columns: ['handle'], unique: true }] }),
      });
      await applyMigration(db, schema);
      const insert = (tenant: string, email: string, handle: string) =>
        db.transaction({ readOnly: false, auth: as(tenant) }, (trx) => trx.insertInto('users').values({ email, handle }).execute());
      await insert(tenantA, 'ann@example.com', 'ann');
      // Another tenant may hold the same values: a unique violation here would tell it tenant A has them.
      await insert(tenantB, 'ann@example.com', 'ann');
      // Within one tenant they are unique.
      await expect(insert(tenantA, 'ann@example.com', 'other')).rejects.toMatchObject({ code: '23505', constraint: 'users_email_key' });
      await expect(insert(tenantA, 'bob@example.com', 'ann')).rejects.toMatchObject({ code: '23505', constraint: 'users_handle_key' });
      await expectNothingPending(schema);
    });

    it('moves a column unique across tenants and a foreign key on the column alone (an older fw) within each tenant', async () => {
      const v1 = defineSchema({
        users: table({ id: t.uuid().defaultRandom().primaryKey(), email: t.text().unique(), code: t.text().unique() }, { indexes: [{ columns: ['email', 'id'], unique: true }] }),
        badges: table({ id: t.uuid().defaultRandom().primaryKey(), code: t.text().references('users', 'code'), ownerId: t.uuid().nullable().references('users', 'id', { onDelete: 'set null' }) }),
      });
      await applyMigration(db, v1);
      expect(await constraintColumns('users')).toEqual({ users_code_key: ['tenant_id', 'code'], users_email_key: ['tenant_id', 'email'], users_id_tenant_key: ['tenant_id', 'id'] });
      expect(await foreignKeys('badges')).toEqual({
        badges_code_fkey: 'FOREIGN KEY (tenant_id, code) REFERENCES users(tenant_id, code)',
        badges_ownerId_fkey: 'FOREIGN KEY (tenant_id, "ownerId") REFERENCES users(tenant_id, id) ON DELETE SET NULL ("ownerId")',
      });
      // What an older fw made: constraints and the unique index across all tenants, foreign keys on the column alone.
      await sql`alter table badges drop constraint badges_code_fkey, drop constraint "badges_ownerId_fkey"`.execute(db.admin);
      await sql`alter table users drop constraint users_email_key, add constraint users_email_key unique (email)`.execute(db.admin);
      await sql`alter table users drop constraint users_code_key, add constraint users_code_key unique (code), drop constraint users_id_tenant_key`.execute(db.admin);
      await sql`alter table badges add constraint badges_code_fkey foreign key (code) references users (code), add constraint "badges_ownerId_fkey" foreign key ("ownerId") references users (id) on delete set null`.execute(db.admin);
      await sql`drop index users_email_id_key`.execute(db.admin);
      await sql`create unique index users_email_id_key on users (email, id)`.execute(db.admin);
      await sql`comment on index users_email_id_key is 'fw:index'`.execute(db.admin);
      const plan = await planMigration(db, v1);
      expect(plan.blocked).toEqual([]);
      expect(plan.changes.map((c) => c.description)).toEqual([
        'drop index users_email_id_key (its definition changed)',
        'create unique index users_email_id_key on users (tenant_id, email, id)',
        'drop the foreign key badges_code_fkey of badges.code on the column alone (it is added again within the tenant)',
        'drop the foreign key badges_ownerId_fkey of badges.ownerId on the column alone (it is added again within the tenant)',
        'make users.email unique within each tenant (tenant_id, email), not across tenants',
        'make users.code unique within each tenant (tenant_id, code), not across tenants',
        'add the key (tenant_id, id) of users, which foreign keys within the tenant reference',
        'add the foreign key of badges.code → users.code, within the tenant (tenant_id, code)',
        'add the foreign key of badges.ownerId → users.id, within the tenant (tenant_id, ownerId)',
      ]);
      await applyMigration(db, v1);
      expect(await constraintColumns('users')).toEqual({ users_code_key: ['tenant_id', 'code'], users_email_key: ['tenant_id', 'email'], users_id_tenant_key: ['tenant_id', 'id'] });
      await expectNothingPending(v1);
      // A new table referencing an existing one gets its key within the tenant too, once that table's key is there.
      const v2 = defineSchema({ ...v1.tables, invites: table({ id: t.uuid().defaultRandom().primaryKey(), email: t.text().references('users', 'email') }) });
      expect((await applyMigration(db, v2)).blocked).toEqual([]);
      expect(await foreignKeys('invites')).toEqual({ invites_email_fkey: 'FOREIGN KEY (tenant_id, email) REFERENCES users(tenant_id, email)' });
      await expectNothingPending(v2);
    });

    it('refuses to move a foreign key within the tenant while rows reference another tenant, and says how to find them', async () => {
      const schema = defineSchema({
        users: table({ id: t.uuid().defaultRandom().primaryKey(), name: t.text() }),
        notes: table({ id: t.uuid().defaultRandom().primaryKey(), authorId: t.uuid().references('users') }),
      });
      await applyMigration(db, schema);
      // An older fw's key on the column alone, and a row of tenant A pointing at tenant B's user.
      await sql`alter table notes drop constraint "notes_authorId_fkey", add constraint "notes_authorId_fkey" foreign key ("authorId") references users (id)`.execute(db.admin);
      const bob = await db.transaction({ readOnly: false, auth: as(tenantB) }, (trx) => trx.insertInto('users').values({ name: 'bob' }).returning('id').executeTakeFirstOrThrow());
      await db.transaction({ readOnly: false, auth: as(tenantA) }, (trx) => trx.insertInto('notes').values({ authorId: bob.id }).execute());
      const plan = await planMigration(db, schema);
      expect(plan.changes).toEqual([]);
      expect(plan.blocked.map((d) => `${d.code} ${d.path}`)).toEqual(['cross_tenant_reference schema.notes.authorId']);
      expect(plan.blocked[0]!.hint).toContain('select t.* from "notes" t join "users" r on r."id" = t."authorId" where r.tenant_id <> t.tenant_id');
    });

    it('keeps foreign keys between tenant tables within the tenant: no row points at, learns of, blocks or is cascaded by another tenant\'s row', async () => {
      const schema = defineSchema({
        users: table({ id: t.uuid().defaultRandom().primaryKey(), name: t.text() }),
        notes: table({ id: t.uuid().defaultRandom().primaryKey(), authorId: t.uuid().references('users', 'id', { onDelete: 'cascade' }) }),
        pins: table({ id: t.uuid().defaultRandom().primaryKey(), authorId: t.uuid().references('users') }),
      });
      await applyMigration(db, schema);
      const addUser = (tenant: string) =>
        db.transaction({ readOnly: false, auth: as(tenant) }, (trx) => trx.insertInto('users').values({ name: 'u' }).returning('id').executeTakeFirstOrThrow());
      const write = (tenant: string, table: 'notes' | 'pins', authorId: string) =>
        db.transaction({ readOnly: false, auth: as(tenant) }, (trx) => trx.insertInto(table).values({ authorId }).execute());
      const bob = await addUser(tenantB);
      const ann = await addUser(tenantA);
      // Tenant A cannot point at B's user, and the refusal is the one for an id nobody has: nothing to learn.
      const other = await write(tenantA, 'pins', bob.id).catch((error: unknown) => error);
      const nobody = await write(tenantA, 'pins', randomUUID()).catch((error: unknown) => error);
      const refusal = { code: '23503', constraint: 'pins_authorId_fkey', detail: 'Key is not present in table "users".' };
      expect(other).toMatchObject(refusal);
      expect(nobody).toMatchObject(refusal);
      // Its own user, yes; and B deleting its user neither fails on A's rows nor cascades into them.
      await write(tenantA, 'notes', ann.id);
      await write(tenantB, 'notes', bob.id);
      await db.transaction({ readOnly: false, auth: as(tenantB) }, (trx) => trx.deleteFrom('users').where('id', '=', bob.id).execute());
      const notesOf = (tenant: string) => db.transaction({ readOnly: true, auth: as(tenant) }, async (trx) => (await trx.selectFrom('notes').select('authorId').execute()).map((r) => r.authorId));
      expect(await notesOf(tenantA)).toEqual([ann.id]);
      expect(await notesOf(tenantB)).toEqual([]);
    });

    it('lets two concurrent migrations both succeed while only one writes a migration', async () => {
      const schema = defineSchema({
        users: table({ id: t.uuid().defaultRandom().primaryKey(), role: t.enum(['a', 'b']) }, shared),
        notes: table({ id: t.uuid().defaultRandom().primaryKey(), authorId: t.uuid().references('users'), title: t.text() }, { indexes: [{ columns: ['title'] }] }),
      });
      const other = await env.another();
      const results = await Promise.all([applyMigration(db, schema), applyMigration(other, schema)]);
      expect(results.map((r) => r.blocked)).toEqual([[], []]);
      expect(results.filter((r) => r.migrationId !== null)).toHaveLength(1);
      expect(results.map((r) => r.applied.length).sort()).toEqual([0, 7]);
      expect(await migrationRows()).toBe(1);
      await expectNothingPending(schema);
    });

    it('lists applied and pending migrations', async () => {
      const v1 = defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text() }, shared) });
      const before = await migrationStatus(db, v1);
      expect(before.applied).toEqual([]);
      expect(before.pending.map((c) => c.kind)).toEqual(['create_table', 'enable_identity_policy']);

      const { migrationId } = await applyMigration(db, v1);
      const v2 = defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text(), body: t.text().nullable() }, shared) });
      const status = await migrationStatus(db, v2);
      const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
      expect(status.applied).toHaveLength(1);
      expect(status.applied[0]).toMatchObject({ id: migrationId, fwVersion: version, changes: [{ kind: 'create_table', description: expect.stringContaining('notes') }, { kind: 'enable_identity_policy' }] });
      expect(status.applied[0]!.checksum).toMatch(/^[0-9a-f]{64}$/);
      expect(Number.isNaN(Date.parse(status.applied[0]!.appliedAt))).toBe(false);
      expect(status.pending).toMatchObject([{ kind: 'add_column', table: 'notes', column: 'body' }]);
      expect(status.blocked).toEqual([]);
    });

    it('numbers migrations 1, 2, 3 however far the id sequence has run ahead (a crash, a rolled-back insert)', async () => {
      const v1 = defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text() }, shared) });
      const v2 = defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text(), body: t.text().nullable() }, shared) });
      const v3 = defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text(), body: t.text().nullable(), pinned: t.boolean().default(false) }, shared) });
      expect((await applyMigration(db, v1)).migrationId).toBe(1);
      // What recovery after a crash does to a sequence (PostgreSQL logs 32 values ahead; an embedded
      // database killed by SIGKILL comes back past them), and what a rolled-back insert leaves.
      await sql`select nextval(pg_get_serial_sequence('public._fw_migrations', 'id')) from generate_series(1, 32)`.execute(db.admin);
      await db.admin.transaction().execute(async (trx) => {
        await sql`insert into _fw_migrations (checksum, fw_version, changes) values ('x', 'x', '[]')`.execute(trx);
        await sql`select 1 / 0`.execute(trx);
      }).catch(() => undefined);
      expect((await applyMigration(db, v2)).migrationId).toBe(2);
      // A plan made and discarded, and a dry run, number nothing.
      await planMigration(db, v3);
      expect((await applyMigration(db, v3)).migrationId).toBe(3);
      expect((await migrationStatus(db, v3)).applied.map((m) => m.id)).toEqual([1, 2, 3]);
      // An older fw inserting by the column's default takes the next id, not one in use.
      const { rows } = await sql<{ id: number }>`insert into _fw_migrations (checksum, fw_version, changes) values ('older', '0.0.0', '[]') returning id`.execute(db.admin);
      expect(Number(rows[0]!.id)).toBe(4);
    });

    it('creates the system tables idempotently; the app role writes the outbox only through fw (enqueueInTransaction)', async () => {
      await ensureSystemTables(db);
      await ensureSystemTables(db);
      await expect(db.transaction({ readOnly: false, auth: as(tenantA) }, (trx) => trx.insertInto('_fw_outbox').values({ event: 'noteCreated' }).execute())).rejects.toThrow(/permission denied/);
      await db.transaction({ readOnly: false, auth: as(tenantA) }, (trx) => enqueueInTransaction(trx, null, [{ event: 'noteCreated', payload: { id: 1 } }]));
      const rows = await db.admin.selectFrom('_fw_outbox').select(['event', 'status', 'attempts']).execute();
      expect(rows).toEqual([{ event: 'noteCreated', status: 'pending', attempts: 0 }]);
      await expectNothingPending(defineSchema({}));
    });
  });
}

// A managed PostgreSQL (RDS, Cloud SQL, …) migrates as a plain owner, not a superuser: forced row-level
// security then hides the rows of tenant tables from the owner too, and fw must still see them.
describe.skipIf(!url)('migrations as a non-superuser owner on PostgreSQL', () => {
  const name = `fw_t_${randomBytes(6).toString('hex')}`;
  let db: FwDatabase;

  beforeAll(async () => {
    await withServer(url!, async (client) => {
      // Roles are cluster-wide. Another run of this suite may be setting them up right now: a session
      // lock serialises the runs (no retry after a guessed pause). Other suites and fw itself create these
      // roles without that lock: a concurrent duplicate is harmless (the other side committed it), and a
      // catalog row updated concurrently is retried at once (PostgreSQL reports it after the other commit).
      const settle = async (statement: string): Promise<void> => {
        for (let attempt = 1; ; attempt++) {
          try {
            await client.query(statement);
            return;
          } catch (error) {
            const { code, message } = error as { code?: string; message?: string };
            if (code === '42710' || code === '23505') return;
            if (!(attempt < 5 && /tuple concurrently updated/.test(message ?? ''))) throw error;
          }
        }
      };
      await client.query(`select pg_advisory_lock(hashtext('fw migrate.test: fw_t_owner'))`);
      try {
        await settle(`do $$ begin if not exists (select 1 from pg_roles where rolname = 'fw_t_owner') then create role fw_t_owner login nosuperuser; end if; end $$`);
        await settle(`do $$ begin if not exists (select 1 from pg_roles where rolname = '${APP_ROLE}') then create role ${APP_ROLE} nologin; end if; end $$`);
        await settle(`grant ${APP_ROLE} to fw_t_owner`);
        // fw makes the request login role of the database as its owner (runtime/db/request-login.ts).
        await settle(`alter role fw_t_owner createrole`);
      } finally {
        await client.query(`select pg_advisory_unlock(hashtext('fw migrate.test: fw_t_owner'))`);
      }
      await client.query(`create database ${name} owner fw_t_owner`);
    });
    const target = new URL(url!);
    target.pathname = `/${name}`;
    target.username = 'fw_t_owner';
    db = await createDatabase({ url: target.toString() });
  }, 60_000);

  afterAll(async () => {
    await db?.close();
    await withServer(url!, async (client) => {
      await client.query(`drop database if exists ${name} with (force)`);
      await client.query(`drop role if exists ${requestLoginRole(name)}`);
    });
  });

  it('sees the rows of a tenant table when deciding whether a NOT NULL column can be added', async () => {
    const v1 = defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text() }) });
    expect((await applyMigration(db, v1)).blocked).toEqual([]);
    await db.transaction({ readOnly: false, auth: as(tenantA) }, (trx) => trx.insertInto('notes').values({ title: 'x' }).execute());
    expect((await sql<{ n: string }>`select count(*) as n from notes`.execute(db.admin)).rows[0]!.n).toBe('0'); // the owner is confined too
    const v2 = defineSchema({ notes: table({ id: t.uuid().defaultRandom().primaryKey(), title: t.text(), body: t.text() }) });
    const result = await applyMigration(db, v2);
    expect(result.blocked).toMatchObject([{ code: 'not_null_without_default', path: 'schema.notes.body' }]);
    const plan = await planMigration(db, v1);
    expect(plan).toEqual({ changes: [], blocked: [] });
  });
});
