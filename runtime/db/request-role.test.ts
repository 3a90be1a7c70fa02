/**
 * Row-level security must hold against attacker-shaped SQL in a handler (an SQL-injection bug): a
 * request transaction cannot leave its role, become the owner, change its tenant or user, write outbox
 * rows for someone else, or leave session state for the next request. Real PostgreSQL only: PGlite is
 * one superuser session and enforces none of this (docs/security.md).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPostgresDatabase, testDatabaseUrl } from '../../e2e/support/postgres.ts';
import type { Auth } from '../entry-types.ts';
import { defineSchema, t, table } from '../schema.ts';
import { APP_ROLE, createDatabase, type FwDatabase } from './database.ts';
import { applyMigration, ensureSystemTables } from './migrate.ts';
import { requestLoginRole } from './request-login.ts';

if (!testDatabaseUrl) console.warn('request-role.test.ts: FW_TEST_DATABASE_URL is not set, so this PostgreSQL-only suite is skipped.');

const schema = defineSchema({ notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text() }) });

describe.skipIf(!testDatabaseUrl)('the request role on PostgreSQL', () => {
  let db: FwDatabase;
  let drop: () => Promise<void>;
  const alice: Auth = { kind: 'user', userId: 'alice', tenantId: randomUUID(), role: null };
  const bob: Auth = { kind: 'user', userId: 'bob', tenantId: randomUUID(), role: null };
  const asAlice = <R>(fn: (trx: Kysely<any>) => Promise<R>, readOnly = true) => db.transaction({ readOnly, auth: alice }, fn);

  beforeAll(async () => {
    const pg = await createTestPostgresDatabase();
    drop = pg.drop;
    // One request connection: the session-state tests must meet the connection the previous request used.
    db = await createDatabase({ url: pg.url, poolSize: 1 });
    await applyMigration(db, schema);
    await ensureSystemTables(db);
    for (const [auth, titles] of [[alice, ['a1', 'a2']], [bob, ['b1', 'b2', 'b3']]] as const) {
      await db.transaction({ readOnly: false, auth }, (trx) => trx.insertInto('notes').values(titles.map((title) => ({ title }))).execute());
    }
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it('sees only its own tenant (the baseline the attacks below try to break)', async () => {
    const rows = await asAlice((trx) => trx.selectFrom('notes').select('title').orderBy('title').execute());
    expect(rows.map((r) => r.title)).toEqual(['a1', 'a2']);
  });

  it('runs on a login that is neither the owner nor able to read a table on its own', async () => {
    const who = await asAlice(async (trx) => (await sql<{ session: string; current: string }>`select session_user as session, current_user as current`.execute(trx)).rows[0]);
    const database = new URL(db.driver.kind === 'postgres' ? db.driver.url : '').pathname.slice(1);
    expect(who).toEqual({ session: requestLoginRole(database), current: APP_ROLE });
  });

  it('gains nothing from RESET ROLE: the session user has no rights at all', async () => {
    await expect(asAlice((trx) => sql.raw('reset role; select title from notes').execute(trx))).rejects.toMatchObject({ code: '42501' });
  });

  it('cannot SET ROLE to the owner or a superuser', async () => {
    const owner = (await sql<{ owner: string }>`select current_user as owner`.execute(db.admin)).rows[0]!.owner;
    await expect(asAlice((trx) => sql.raw(`set role "${owner}"; select title from notes`).execute(trx))).rejects.toMatchObject({ code: '42501' });
    await expect(asAlice((trx) => sql.raw('set role postgres; select title from notes').execute(trx))).rejects.toMatchObject({ code: '42501' });
  });

  it('cannot SET SESSION AUTHORIZATION', async () => {
    await expect(asAlice((trx) => sql.raw('set session authorization postgres; select title from notes').execute(trx))).rejects.toMatchObject({ code: '42501' });
  });

  it("cannot change its tenant with set_config: the policy refuses the forged identity", async () => {
    const attempt = asAlice((trx) => sql.raw(`select set_config('fw.tenant_id', '${bob.tenantId}', true); select title from notes`).execute(trx));
    await expect(attempt).rejects.toMatchObject({ code: '42501', message: expect.stringContaining('request identity was changed') });
    // Also with every fw.* setting rewritten together, and at session level.
    const forged = asAlice((trx) =>
      sql.raw(`select set_config('fw.tenant_id', '${bob.tenantId}', false), set_config('fw.user_id', 'bob', false), set_config('fw.identity', repeat('0', 64), false); select title from notes`).execute(trx),
    );
    await expect(forged).rejects.toMatchObject({ code: '42501' });
  });

  it('cannot change its tenant after a statement verified it (the per-transaction cache binds the settings)', async () => {
    const attempt = asAlice(async (trx) => {
      await trx.selectFrom('notes').select('title').execute();
      await sql.raw(`select set_config('fw.tenant_id', '${bob.tenantId}', true)`).execute(trx);
      return trx.selectFrom('notes').select('title').execute();
    });
    await expect(attempt).rejects.toMatchObject({ code: '42501' });
    const copied = asAlice(async (trx) => {
      await trx.selectFrom('notes').select('title').execute();
      // Even with the verified tag copied along: it covers the tenant it was made for.
      await sql.raw(`select set_config('fw.tenant_id', '${bob.tenantId}', true), set_config('fw.identity_verified', current_setting('fw.identity_verified'), true)`).execute(trx);
      return trx.selectFrom('notes').select('title').execute();
    });
    await expect(copied).rejects.toMatchObject({ code: '42501' });
  });

  it('cannot insert a row into another tenant', async () => {
    await expect(
      asAlice((trx) => sql.raw(`insert into notes (title, tenant_id) values ('planted', '${bob.tenantId}')`).execute(trx), false),
    ).rejects.toMatchObject({ code: '42501' });
    const bobs = await db.transaction({ readOnly: true, auth: bob }, (trx) => trx.selectFrom('notes').select('title').execute());
    expect(bobs.map((r) => r.title).sort()).toEqual(['b1', 'b2', 'b3']);
  });

  it('cannot write an outbox event that the worker would run as another tenant or user', async () => {
    const plant = (tenant: string, user: string) =>
      asAlice((trx) => sql.raw(`insert into _fw_outbox (event, payload, tenant_id, user_id) values ('note.planted', '{}', '${tenant}', '${user}')`).execute(trx), false);
    await expect(plant(bob.tenantId!, 'bob')).rejects.toMatchObject({ code: '42501' });
    await expect(plant(alice.tenantId!, 'bob')).rejects.toMatchObject({ code: '42501' });
    await plant(alice.tenantId!, 'alice'); // its own identity is what ctx.emit writes
    const rows = await sql<{ tenant_id: string; user_id: string }>`select tenant_id, user_id from _fw_outbox where event = 'note.planted'`.execute(db.admin);
    expect(rows.rows).toEqual([{ tenant_id: alice.tenantId, user_id: 'alice' }]);
  });

  it('cannot read fw secrets or the live log', async () => {
    await expect(asAlice((trx) => sql.raw('select value from _fw.secrets').execute(trx))).rejects.toMatchObject({ code: '42501' });
    await expect(asAlice((trx) => sql.raw('reset role; select value from _fw.secrets').execute(trx))).rejects.toMatchObject({ code: '42501' });
  });

  it('leaves no session state for the next request on the same connection', async () => {
    const marker = `leak_${randomBytes(4).toString('hex')}`;
    await asAlice(async (trx) => {
      await sql.raw(`set application_name = '${marker}'; set search_path = pg_temp, public; create temp table notes (title text); insert into notes values ('${marker}')`).execute(trx);
      return null;
    }, false);
    const next = await db.transaction({ readOnly: true, auth: bob }, async (trx) => ({
      applicationName: (await sql<{ v: string }>`select current_setting('application_name') as v`.execute(trx)).rows[0]!.v,
      temp: (await sql<{ t: string | null }>`select to_regclass('pg_temp.notes')::text as t`.execute(trx)).rows[0]!.t,
      titles: (await sql<{ title: string }>`select title from notes order by title`.execute(trx)).rows.map((r) => r.title),
    }));
    expect(next).toEqual({ applicationName: '', temp: null, titles: ['b1', 'b2', 'b3'] });
  });

  it('keeps identity values whole in the prelude whatever the last request left in the session', async () => {
    // SQL injection can leave the pooled session lexing strings the old way (a backslash escapes a
    // quote), and the next prelude is lexed before its reset runs: a value built to end its literal
    // early and set the role must stay one value.
    await asAlice((trx) => sql`set standard_conforming_strings = off; set backslash_quote = on; set escape_string_warning = off`.execute(trx), false);
    const carol: Auth = { kind: 'user', userId: String.raw`carol\', true), set_config($$fw.role$$, $$admin$$, true) --`, tenantId: alice.tenantId, role: null };
    const who = await db.transaction({ readOnly: true, auth: carol }, async (trx) => (await sql<{ user: string; role: string | null }>`select _fw.user_id() as user, _fw.role() as role`.execute(trx)).rows[0]);
    expect(who).toEqual({ user: carol.userId, role: null });
  });
});
