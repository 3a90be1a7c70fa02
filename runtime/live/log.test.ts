import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestPostgresDatabase, testDatabaseUrl } from '../../e2e/support/postgres.ts';
import { until } from '../../e2e/support/until.ts';
import type { Auth } from '../core/entry-types.ts';
import { createDatabase, type FwDatabase } from '../db/database.ts';
import { applyMigration, migrationStatus, planMigration } from '../db/migrate.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { checkResume, initialCursor, listInvalidations, logBounds, pruneInvalidations, readInvalidations, type Invalidation, type LogCursor } from './log.ts';
import { recordInvalidations } from '../db/live-capture.ts';

if (!testDatabaseUrl) console.warn('log.test.ts: FW_TEST_DATABASE_URL is not set, so the PostgreSQL suites are skipped (PGlite runs).');

const T1 = '11111111-1111-4111-8111-111111111111';
const T2 = '22222222-2222-4222-8222-222222222222';
const user = (tenantId: string | null): Auth => ({ kind: 'user', userId: 'u', tenantId, role: 'r' });

const schema = defineSchema({
  notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text() }),
  tags: table({ id: t.uuid().primaryKey().defaultRandom(), label: t.text() }, { tenantScoped: false }),
});

interface LogRow {
  revision: number;
  xid: string;
  table: string;
  tenant: string | null;
  trace: string | null;
}

async function logRows(db: FwDatabase, after = 0): Promise<LogRow[]> {
  const result = await sql<{ revision: string; xid: string; table_name: string; tenant_id: string | null; trace_id: string | null }>`
    select revision, xid::text as xid, table_name, tenant_id, trace_id from _fw_live_invalidations
    where revision > ${after} order by revision`.execute(db.admin);
  return result.rows.map((r) => ({ revision: Number(r.revision), xid: r.xid, table: r.table_name, tenant: r.tenant_id, trace: r.trace_id }));
}

async function latest(db: FwDatabase): Promise<number> {
  return (await logBounds(db.admin)).latestRevision;
}

/** `[table, tenant]` of the rows written after `revision`, sorted. */
async function touched(db: FwDatabase, after: number): Promise<Array<[string, string | null]>> {
  return (await logRows(db, after)).map((r) => [r.table, r.tenant] as [string, string | null]).sort((a, b) => `${a[0]}${a[1]}`.localeCompare(`${b[0]}${b[1]}`));
}

/** Waits until every transaction that had an id when this was called has finished (the cluster is shared). */
async function settle(db: FwDatabase): Promise<void> {
  const next = (await sql<{ x: string }>`select pg_snapshot_xmax(pg_current_snapshot())::text as x`.execute(db.admin)).rows[0]!.x;
  await until(
    async () => (await sql<{ ok: boolean }>`select pg_snapshot_xmin(pg_current_snapshot()) >= ${next}::xid8 as ok`.execute(db.admin)).rows[0]!.ok,
    'the other transactions of the cluster to finish',
    { intervalMs: 20 },
  );
}

const insertNote = (db: FwDatabase, tenant: string, title = 'n') =>
  db.transaction({ readOnly: false, auth: user(tenant) }, (trx) => trx.insertInto('notes').values({ title }).execute());
const insertTag = (db: FwDatabase, label = 'g') =>
  db.transaction({ readOnly: false, auth: user(T1) }, (trx) => trx.insertInto('tags').values({ label }).execute());

const targets = [
  { name: 'PGlite', skip: false },
  { name: 'PostgreSQL', skip: !testDatabaseUrl },
] as const;

for (const target of targets) {
  describe.skipIf(target.skip)(`the live log on ${target.name}`, () => {
    let db: FwDatabase;
    let drop: (() => Promise<void>) | undefined;

    beforeAll(async () => {
      if (target.name === 'PostgreSQL') {
        const pg = await createTestPostgresDatabase();
        drop = pg.drop;
        db = await createDatabase({ url: pg.url });
      } else {
        db = await createDatabase({ dataDir: 'memory://' });
      }
      expect((await applyMigration(db, schema)).blocked).toEqual([]);
    });

    afterAll(async () => {
      try {
        await db?.close();
      } finally {
        await drop?.();
      }
    });

    beforeEach(async () => {
      await sql`truncate notes, tags`.execute(db.admin);
      await sql`truncate _fw_live_invalidations; update _fw_live_state set pruned_through = 0`.execute(db.admin);
    });

    it('records one row per transaction × table × tenant, with the trace id', async () => {
      await db.transaction({ readOnly: false, auth: user(T1), traceId: 'trace-one' }, async (trx) => {
        await trx.insertInto('notes').values({ title: 'a' }).execute();
        await trx.insertInto('notes').values([{ title: 'b' }, { title: 'c' }]).execute();
        await trx.updateTable('notes').set({ title: 'a2' }).where('title', '=', 'a').execute();
        await trx.insertInto('tags').values({ label: 'x' }).execute();
        await trx.insertInto('tags').values({ label: 'y' }).execute();
      });
      const rows = await logRows(db);
      expect(rows.map((r) => [r.table, r.tenant, r.trace])).toEqual([
        ['notes', T1, 'trace-one'],
        ['tags', null, 'trace-one'],
      ]);
      expect(rows[0]!.xid).toBe(rows[1]!.xid);

      await insertNote(db, T1);
      const again = await logRows(db, rows[1]!.revision);
      expect(again.map((r) => [r.table, r.tenant, r.trace])).toEqual([['notes', T1, null]]);
      expect(again[0]!.xid).not.toBe(rows[0]!.xid);
    });

    it('records updates, deletes, tenant moves and truncates, and nothing for statements that touch no row', async () => {
      await insertNote(db, T1, 'a');
      await insertNote(db, T1, 'b');
      await insertNote(db, T2, 'z');
      await insertTag(db, 'g');

      let before = await latest(db);
      await db.transaction({ readOnly: false, auth: user(T1) }, (trx) => trx.updateTable('notes').set({ title: sql`title || '!'` }).execute());
      expect(await touched(db, before)).toEqual([['notes', T1]]);

      before = await latest(db);
      await db.transaction({ readOnly: false, auth: user(T1) }, async (trx) => {
        await trx.deleteFrom('notes').where('title', '=', 'nothing').execute();
        await trx.updateTable('notes').set({ title: 'x' }).where(sql<boolean>`false`).execute();
        await trx.updateTable('tags').set({ label: 'x' }).where('label', '=', 'nothing').execute();
        await trx.deleteFrom('tags').where('label', '=', 'nothing').execute();
      });
      expect(await touched(db, before)).toEqual([]);

      // RLS stops the app role from moving a row to another tenant; the owner can, and both tenants hear of it.
      before = await latest(db);
      await sql`update notes set tenant_id = ${T2} where title = 'a!'`.execute(db.admin);
      const moved = await logRows(db, before);
      expect(moved.map((r) => [r.table, r.tenant]).sort()).toEqual([['notes', T1], ['notes', T2]]);
      expect(moved[0]!.xid).toBe(moved[1]!.xid);

      before = await latest(db);
      await sql`insert into notes (title, tenant_id) values ('m1', ${T1}), ('m2', ${T2}), ('m3', ${T2})`.execute(db.admin);
      expect(await touched(db, before)).toEqual([['notes', T1], ['notes', T2]]);

      before = await latest(db);
      await db.transaction({ readOnly: false, auth: user(T2) }, (trx) => trx.deleteFrom('notes').execute());
      expect(await touched(db, before)).toEqual([['notes', T2]]);

      before = await latest(db);
      await db.transaction({ readOnly: false, auth: user(T2) }, (trx) => trx.updateTable('tags').set({ label: 'h' }).execute());
      expect(await touched(db, before)).toEqual([['tags', null]]);

      before = await latest(db);
      await db.transaction({ readOnly: false, auth: user(T1) }, (trx) => trx.deleteFrom('tags').execute());
      expect(await touched(db, before)).toEqual([['tags', null]]);

      before = await latest(db);
      await sql`truncate notes`.execute(db.admin);
      await sql`truncate tags`.execute(db.admin); // empty, and still recorded
      expect(await touched(db, before)).toEqual([['notes', null], ['tags', null]]);
    });

    it('records nothing for a rolled-back transaction', async () => {
      await expect(
        db.transaction({ readOnly: false, auth: user(T1) }, async (trx) => {
          await trx.insertInto('notes').values({ title: 'a' }).execute();
          await trx.insertInto('tags').values({ label: 'x' }).execute();
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      expect(await logRows(db)).toEqual([]);
    });

    it('keeps the app role away from the log, but lets it record invalidations', async () => {
      const asApp = <R>(fn: Parameters<FwDatabase['transaction']>[1]) =>
        db.transaction({ readOnly: false, auth: user(T1), traceId: 'trace-app' }, fn) as Promise<R>;
      await expect(asApp((trx) => sql`select count(*) from _fw_live_invalidations`.execute(trx))).rejects.toMatchObject({ code: '42501' });
      await expect(asApp((trx) => sql`insert into _fw_live_invalidations (table_name) values ('notes')`.execute(trx))).rejects.toMatchObject({ code: '42501' });
      await expect(asApp((trx) => sql`select * from _fw_live_state`.execute(trx))).rejects.toMatchObject({ code: '42501' });
      await expect(asApp((trx) => sql`update _fw_live_state set pruned_through = 0`.execute(trx))).rejects.toMatchObject({ code: '42501' });
      expect(await logRows(db)).toEqual([]);

      await asApp((trx) =>
        recordInvalidations(trx, [
          { table: 'external', tenantId: T1 },
          { table: 'external', tenantId: T1 },
          { table: 'external', tenantId: null },
        ]),
      );
      const rows = await logRows(db);
      expect(rows.map((r) => [r.table, r.tenant, r.trace])).toEqual([
        ['external', T1, 'trace-app'],
        ['external', null, 'trace-app'],
      ]);
      // Recording is a write: a read-only transaction cannot.
      await expect(
        db.transaction({ readOnly: true, auth: user(T1) }, (trx) => recordInvalidations(trx, [{ table: 'external', tenantId: T1 }])),
      ).rejects.toMatchObject({ code: '25006' });
    });

    it('reads from "now", in order of revision, page by page', async () => {
      await insertNote(db, T1, 'history');
      let cursor: LogCursor = await initialCursor(db.admin);
      expect(cursor.revision).toBe(await latest(db));
      expect((await readInvalidations(db.admin, cursor)).rows).toEqual([]);

      await insertNote(db, T1);
      await insertTag(db);
      await insertNote(db, T2);
      await db.transaction({ readOnly: false, auth: user(T2) }, (trx) => recordInvalidations(trx, [{ table: 'a', tenantId: null }, { table: 'b', tenantId: T2 }]));
      const all: Invalidation[] = [];
      let pages = 0;
      for (;;) {
        const read = await readInvalidations(db.admin, cursor, 2);
        pages++;
        all.push(...read.rows);
        cursor = read.cursor;
        expect(read.expired).toBe(false);
        if (!read.more) break;
      }
      expect(pages).toBe(3);
      expect(all.map((r) => [r.table, r.tenantId])).toEqual([['notes', T1], ['tags', null], ['notes', T2], ['a', null], ['b', T2]]);
      expect(all.map((r) => r.revision)).toEqual([...all.map((r) => r.revision)].sort((a, b) => a - b));
      expect(cursor.revision).toBe(all.at(-1)!.revision);
      expect((await readInvalidations(db.admin, cursor)).rows).toEqual([]);

      const listed = await listInvalidations(db.admin, { tenantId: T2, limit: 10 });
      expect(listed.map((r) => [r.table, r.tenantId])).toEqual([['b', T2], ['a', null], ['notes', T2], ['tags', null]]);
      expect(listed[0]).toMatchObject({ xid: expect.stringMatching(/^\d+$/), traceId: null, createdAt: expect.stringMatching(/^\d{4}-/) });
      expect((await listInvalidations(db.admin, { table: 'notes', beforeRevision: listed[2]!.revision })).map((r) => r.tenantId)).toEqual([T1, T1]);
      expect((await listInvalidations(db.admin, { tenantId: null })).map((r) => r.table)).toEqual(['a', 'tags']);
    });

    it('lists the newest first, by revision as a number', async () => {
      // Revisions that straddle a power of ten: as text, "99" would sort above "101" and "100".
      await sql`select setval('_fw_live_invalidations_revision_seq', 98)`.execute(db.admin);
      for (const tenant of [T1, T2, T1]) await insertNote(db, tenant);
      expect((await logRows(db)).map((r) => r.revision)).toEqual([99, 100, 101]);
      expect((await listInvalidations(db.admin)).map((r) => r.revision)).toEqual([101, 100, 99]);
      expect((await listInvalidations(db.admin, { limit: 1 })).map((r) => r.revision)).toEqual([101]);
      expect((await listInvalidations(db.admin, { tenantId: T1, limit: 2 })).map((r) => r.revision)).toEqual([101, 99]);
      expect((await listInvalidations(db.admin, { beforeRevision: 101, limit: 1 })).map((r) => r.revision)).toEqual([100]);
    });

    it('tells a resuming client whether its tables changed', async () => {
      await insertNote(db, T1);
      await settle(db);
      await insertTag(db);
      await settle(db);
      await insertNote(db, T2);
      const [a, b, c] = (await logRows(db)).map((r) => r.revision) as [number, number, number];
      const check = (lastRevision: number, tables: string[], tenantId: string | null) => checkResume(db.admin, { lastRevision, tables, tenantId });

      expect(await check(c, ['notes', 'tags'], T1)).toEqual({ kind: 'up-to-date' });
      expect(await check(b, ['notes'], T1)).toEqual({ kind: 'up-to-date' });
      expect(await check(a, ['notes'], T1)).toEqual({ kind: 'up-to-date' }); // only another tenant wrote notes since
      expect(await check(a, ['notes'], T2)).toEqual({ kind: 'changed' }); // its own tenant
      expect(await check(a, ['tags'], T1)).toEqual({ kind: 'changed' }); // a table of every tenant
      expect(await check(a, ['tags'], null)).toEqual({ kind: 'changed' });
      expect(await check(a, [], T1)).toEqual({ kind: 'up-to-date' });
      expect(await check(0, ['notes'], T1)).toEqual({ kind: 'changed' });

      const unknown = { kind: 'reset', reason: 'revision_unknown', oldestRevision: 0 };
      const { rows } = await sql<{ last: string }>`select last_value::text as last from _fw_live_invalidations_revision_seq`.execute(db.admin);
      expect(await check(Number(rows[0]!.last) + 1, ['notes'], T1)).toEqual(unknown);
      expect(await check(-1, ['notes'], T1)).toEqual(unknown);
      expect(await check(1.5, ['notes'], T1)).toEqual(unknown);
    });

    it('prunes old rows, raises pruned_through, and resets resumes from before it', async () => {
      await insertNote(db, T1, 'old');
      await settle(db);
      await insertNote(db, T1, 'older-but-newest-old');
      await settle(db);
      await insertNote(db, T2, 'new');
      const [a, b, c] = (await logRows(db)).map((r) => r.revision) as [number, number, number];
      const stalled = { revision: a - 1, pending: [] };
      await sql`update _fw_live_invalidations set created_at = now() - interval '2 hours' where revision in (${a}, ${b})`.execute(db.admin);

      // Two processes at once: one prunes, the other finds it busy (or nothing left) and deletes nothing.
      const results = await Promise.all([pruneInvalidations(db.admin, { olderThanMs: 3_600_000 }), pruneInvalidations(db.admin, { olderThanMs: 3_600_000 })]);
      expect(results.map((r) => r.deleted).sort()).toEqual([0, 1]);
      expect(Math.max(...results.map((r) => r.prunedThrough))).toBe(b);
      expect((await logRows(db)).map((r) => r.revision)).toEqual([b, c]);
      expect(await logBounds(db.admin)).toEqual({ latestRevision: c, oldestRetainedRevision: b, prunedThrough: b });

      expect(await checkResume(db.admin, { lastRevision: a, tables: ['notes'], tenantId: T1 })).toEqual({ kind: 'reset', reason: 'revision_expired', oldestRevision: b });
      expect(await checkResume(db.admin, { lastRevision: b, tables: ['notes'], tenantId: T1 })).toEqual({ kind: 'up-to-date' });
      expect(await checkResume(db.admin, { lastRevision: b, tables: ['notes'], tenantId: T2 })).toEqual({ kind: 'changed' });
      // A reader that could not read across the pruned rows is told so.
      const read = await readInvalidations(db.admin, stalled);
      expect(read.expired).toBe(true);
      expect(read.rows.map((r) => r.revision)).toEqual([b, c]);
      expect((await readInvalidations(db.admin, read.cursor)).expired).toBe(false);

      // Nothing old enough: nothing changes.
      expect(await pruneInvalidations(db.admin, { olderThanMs: 3_600_000 })).toEqual({ deleted: 0, prunedThrough: b });
      await expect(pruneInvalidations(db.admin, { olderThanMs: -1 })).rejects.toThrow(/olderThanMs/);
    });

    it('keeps capture triggers on every table: new tables, dropped triggers and databases from before live queries', async () => {
      const triggers = async () =>
        (
          await sql<{ name: string }>`
            select c.relname || '.' || t.tgname as name from pg_trigger t join pg_class c on c.oid = t.tgrelid
            where c.relnamespace = 'public'::regnamespace and t.tgname like '\\_fw\\_live\\_%' order by 1`.execute(db.admin)
        ).rows.map((r) => r.name);
      const all = (...tables: string[]) => tables.flatMap((table) => ['delete', 'insert', 'truncate', 'update'].map((event) => `${table}._fw_live_${event}`));
      expect(await triggers()).toEqual(all('notes', 'tags'));

      const grown = defineSchema({ ...schema.tables, comments: table({ id: t.uuid().primaryKey().defaultRandom(), body: t.text() }) });
      expect((await applyMigration(db, grown)).applied.map((c) => c.kind)).toContain('create_table');
      expect(await triggers()).toEqual(all('comments', 'notes', 'tags'));
      const before = await latest(db);
      await db.transaction({ readOnly: false, auth: user(T2) }, (trx) => trx.insertInto('comments').values({ body: 'x' }).execute());
      expect(await touched(db, before)).toEqual([['comments', T2]]);

      await sql`drop trigger _fw_live_insert on notes; drop trigger _fw_live_truncate on tags`.execute(db.admin);
      expect(await planMigration(db, grown)).toEqual({ changes: [], blocked: [] });
      expect(await applyMigration(db, grown)).toEqual({ applied: [], blocked: [], migrationId: null });
      expect(await triggers()).toEqual(all('comments', 'notes', 'tags'));

      // A database from before live queries: no log, no functions, no triggers.
      await sql`drop function _fw_live_capture() cascade; drop function _fw_live_record(text, uuid); drop table _fw_live_invalidations, _fw_live_state`.execute(db.admin);
      expect(await triggers()).toEqual([]);
      const status = await migrationStatus(db, grown);
      expect(status.pending).toEqual([]);
      expect(status.blocked).toEqual([]);
      expect(await applyMigration(db, grown)).toEqual({ applied: [], blocked: [], migrationId: null });
      expect(await triggers()).toEqual(all('comments', 'notes', 'tags'));
      await insertNote(db, T1);
      expect(await touched(db, 0)).toEqual([['notes', T1]]);
      expect((await migrationStatus(db, grown)).pending).toEqual([]);
    });
  });
}

describe.skipIf(!testDatabaseUrl)('gap-safe reading on PostgreSQL', () => {
  let db: FwDatabase;
  let drop: (() => Promise<void>) | undefined;
  let url: string;

  beforeAll(async () => {
    const pg = await createTestPostgresDatabase();
    drop = pg.drop;
    url = pg.url;
    db = await createDatabase({ url: pg.url });
    expect((await applyMigration(db, schema)).blocked).toEqual([]);
  });

  afterAll(async () => {
    try {
      await db?.close();
    } finally {
      await drop?.();
    }
  });

  it('reads a late commit with an earlier revision, and resumes from before it as changed', async () => {
    const cursor = await initialCursor(db.admin);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let wrote!: (xid: string) => void;
    const written = new Promise<string>((resolve) => (wrote = resolve));
    // T1 writes first (so it draws the lower revision) and stays open…
    const slow = db.transaction({ readOnly: false, auth: user(T1) }, async (trx) => {
      await trx.insertInto('notes').values({ title: 'slow' }).execute();
      wrote((await sql<{ xid: string }>`select pg_current_xact_id()::text as xid`.execute(trx)).rows[0]!.xid);
      await gate;
    });
    let first: Awaited<ReturnType<typeof readInvalidations>>;
    try {
      const slowXid = await written;
      // …while T2 writes (a higher revision) and commits.
      await insertTag(db, 'fast');
      first = await readInvalidations(db.admin, cursor);
      expect(first.rows.map((r) => [r.table, r.tenantId])).toEqual([['tags', null]]);
      expect(first.cursor.pending).toContain(slowXid);
      // Right now nothing committed concerns notes of T1 (the reader will deliver T1 when it commits).
      expect(await checkResume(db.admin, { lastRevision: first.cursor.revision, tables: ['notes'], tenantId: T1 })).toEqual({ kind: 'up-to-date' });
    } finally {
      release();
      await slow;
    }
    const clientRevision = first.cursor.revision;
    const second = await readInvalidations(db.admin, first.cursor);
    expect(second.rows.map((r) => [r.table, r.tenantId])).toEqual([['notes', T1]]);
    expect(second.rows[0]!.revision).toBeLessThan(clientRevision);
    expect(second.cursor.revision).toBe(clientRevision);
    expect((await readInvalidations(db.admin, second.cursor)).rows).toEqual([]);
    // Without the pending transaction, "revision > cursor" alone would have skipped it.
    expect((await readInvalidations(db.admin, { revision: clientRevision, pending: [] })).rows).toEqual([]);

    const check = (tables: string[], tenantId: string) => checkResume(db.admin, { lastRevision: clientRevision, tables, tenantId });
    expect(await check(['notes'], T1)).toEqual({ kind: 'changed' });
    expect(await check(['notes'], T2)).toEqual({ kind: 'up-to-date' });
    expect(await check(['tags'], T1)).toEqual({ kind: 'up-to-date' });
    expect(await check(['other'], T1)).toEqual({ kind: 'up-to-date' });
  });

  // A snapshot lists in xip only running transactions below its xmax, and xmax is one past the newest
  // COMPLETED transaction: a transaction with a higher xid that drew a lower revision, still running
  // when a lower xid commits, is above xmax and unlisted. Its row must still be read when it commits.
  it('reads the late row of a running transaction above the snapshot xmax', async () => {
    const { default: pg } = await import('pg');
    const early = new pg.Client({ connectionString: url });
    const late = new pg.Client({ connectionString: url });
    await early.connect();
    await late.connect();
    try {
      const cursor = await initialCursor(db.admin);
      const xid = async (client: InstanceType<typeof pg.Client>) => BigInt((await client.query('select pg_current_xact_id()::text as x')).rows[0].x);
      await early.query('begin');
      const earlyXid = await xid(early);
      await late.query('begin');
      expect(await xid(late)).toBeGreaterThan(earlyXid);
      // The higher xid draws the lower revision, then the lower xid draws a higher one and commits.
      await late.query(`select "_fw_live_record"('late_table', null)`);
      await early.query(`select "_fw_live_record"('early_table', null)`);
      await early.query('commit');
      const first = await readInvalidations(db.admin, cursor);
      expect(first.rows.map((row) => row.table)).toEqual(['early_table']);
      await late.query('commit');
      const second = await readInvalidations(db.admin, first.cursor);
      expect(second.rows.map((row) => row.table)).toEqual(['late_table']);
      expect(second.rows[0]!.revision).toBeLessThan(first.rows[0]!.revision);
      expect((await readInvalidations(db.admin, second.cursor)).rows).toEqual([]);
    } finally {
      await early.end();
      await late.end();
    }
  });
});

// Managed PostgreSQL (RDS, Cloud SQL, …) migrates as a plain owner: the SECURITY DEFINER capture then
// runs as that owner, and must still see every row a statement touched despite forced row-level security.
describe.skipIf(!testDatabaseUrl)('the live log migrated by a non-superuser owner on PostgreSQL', () => {
  let db: FwDatabase;
  let drop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const pg = await createTestPostgresDatabase();
    drop = pg.drop;
    const { default: pgModule } = await import('pg');
    const client = new pgModule.Client({ connectionString: testDatabaseUrl });
    await client.connect();
    try {
      // Roles are cluster-wide and another suite may be creating them right now ("tuple concurrently
      // updated"): retry until it goes through, naming the last error if it never does.
      const retried = async (statement: string) => {
        let last: unknown;
        await until(
          () => client.query(statement).then(() => true, (error: unknown) => ((last = error), false)),
          `${statement} to succeed`,
          { intervalMs: 50 },
        ).catch((error: Error) => {
          throw new Error(`${error.message}; last error: ${String(last)}`);
        });
      };
      await retried(`do $$ begin if not exists (select 1 from pg_roles where rolname = 'fw_t_owner') then create role fw_t_owner login nosuperuser; end if; end $$`);
      await retried(`do $$ begin if not exists (select 1 from pg_roles where rolname = 'fw_app') then create role fw_app nologin; end if; end $$`);
      await retried('grant fw_app to fw_t_owner');
      // It sets up the request login role (db/request-login.ts); not left to another suite's grant.
      await retried('alter role fw_t_owner createrole');
      await client.query(`alter database "${new URL(pg.url).pathname.slice(1)}" owner to fw_t_owner`);
    } finally {
      await client.end();
    }
    const url = new URL(pg.url);
    url.username = 'fw_t_owner';
    db = await createDatabase({ url: url.toString() });
    expect((await applyMigration(db, schema)).blocked).toEqual([]);
  });

  afterAll(async () => {
    try {
      await db?.close();
    } finally {
      await drop?.();
    }
  });

  it('captures the tenants of request writes and serves readers and resumes', async () => {
    const cursor = await initialCursor(db.admin);
    await insertNote(db, T1);
    await insertNote(db, T2);
    await db.transaction({ readOnly: false, auth: user(T2), traceId: 'trace-owner' }, async (trx) => {
      await trx.deleteFrom('notes').execute();
      await recordInvalidations(trx, [{ table: 'external', tenantId: T2 }]);
    });
    const read = await readInvalidations(db.admin, cursor);
    expect(read.rows.map((r) => [r.table, r.tenantId])).toEqual([['notes', T1], ['notes', T2], ['notes', T2], ['external', T2]]);
    expect(await checkResume(db.admin, { lastRevision: read.rows[0]!.revision, tables: ['notes'], tenantId: T2 })).toEqual({ kind: 'changed' });
    expect((await pruneInvalidations(db.admin, { olderThanMs: 0 })).prunedThrough).toBe(read.cursor.revision);
  });
});
