/**
 * Row-level security must hold against attacker-shaped SQL in a handler (an SQL-injection bug): a
 * request transaction cannot leave its role, become the owner, change or borrow an identity, stack
 * statements or end its transaction, write outbox rows for someone else, learn another request's
 * identity from `pg_stat_activity`, replay a proof, or leave session state for the next request. Real
 * PostgreSQL only: PGlite is one superuser session and enforces none of this (docs/security.md).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPostgresDatabase, testDatabaseUrl } from '../../e2e/support/postgres.ts';
import type { Auth } from '../core/entry-types.ts';
import { defineSchema, t, table } from '../core/schema.ts';
import { APP_ROLE, createDatabase, type FwDatabase } from './database.ts';
import { applyMigration, ensureSystemTables } from './migrate.ts';
import { IDENTITY_SECRET, identityProof } from './request-identity.ts';
import { requestLoginRole, requestLoginUrl } from './request-login.ts';
import { databaseSecret } from './secrets.ts';

if (!testDatabaseUrl) console.warn('request-role.test.ts: FW_TEST_DATABASE_URL is not set, so this PostgreSQL-only suite is skipped.');

const schema = defineSchema({
  notes: table({ id: t.uuid().primaryKey().defaultRandom(), title: t.text() }),
  announcements: table({ id: t.uuid().primaryKey().defaultRandom(), text: t.text() }, { tenantScoped: false }),
});

describe.skipIf(!testDatabaseUrl)('the request role on PostgreSQL', () => {
  let db: FwDatabase;
  let url: string;
  let drop: () => Promise<void>;
  const alice: Auth = { kind: 'user', userId: 'alice', tenantId: randomUUID(), role: null };
  const bob: Auth = { kind: 'user', userId: 'bob', tenantId: randomUUID(), role: null };
  const asAlice = <R>(fn: (trx: Kysely<any>) => Promise<R>, readOnly = true) => db.transaction({ readOnly, auth: alice, label: 'query search' }, fn);
  const run = (trx: Kysely<any>, text: string) => sql.raw(text).execute(trx);

  beforeAll(async () => {
    const database = await createTestPostgresDatabase();
    drop = database.drop;
    url = database.url;
    // One request connection: the session-state tests must meet the connection the previous request used.
    db = await createDatabase({ url, poolSize: 1 });
    await applyMigration(db, schema);
    await ensureSystemTables(db);
    for (const [auth, titles] of [[alice, ['a1', 'a2']], [bob, ['b1', 'b2', 'b3']]] as const) {
      await db.transaction({ readOnly: false, auth }, (trx) => trx.insertInto('notes').values(titles.map((title) => ({ title }))).execute());
    }
    await db.transaction({ readOnly: false, auth: alice }, (trx) => trx.insertInto('announcements').values({ text: 'welcome' }).execute());
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
    expect(who).toEqual({ session: requestLoginRole(new URL(url).pathname.slice(1)), current: APP_ROLE });
  });

  it('gains nothing from RESET ROLE: the session user has no rights at all', async () => {
    await expect(asAlice(async (trx) => (await run(trx, 'reset role'), run(trx, 'select title from notes')))).rejects.toMatchObject({ code: '42501' });
  });

  it('cannot SET ROLE to the owner or a superuser, nor SET SESSION AUTHORIZATION', async () => {
    const owner = (await sql<{ owner: string }>`select current_user as owner`.execute(db.admin)).rows[0]!.owner;
    await expect(asAlice((trx) => run(trx, `set role "${owner}"`))).rejects.toMatchObject({ code: '42501' });
    await expect(asAlice((trx) => run(trx, 'set role postgres'))).rejects.toMatchObject({ code: '42501' });
    await expect(asAlice((trx) => run(trx, 'set session authorization postgres'))).rejects.toMatchObject({ code: '42501' });
  });

  it('cannot change its tenant with set_config: the policy refuses the forged identity', async () => {
    const attempt = asAlice(async (trx) => (await run(trx, `select set_config('fw.tenant_id', '${bob.tenantId}', true)`), run(trx, 'select title from notes')));
    await expect(attempt).rejects.toMatchObject({ code: '42501', message: expect.stringContaining('request identity was changed') });
    // Also with every fw.* setting rewritten together (the tag cleared), and at session level.
    const forged = asAlice(async (trx) => {
      await run(trx, `select set_config('fw.tenant_id', '${bob.tenantId}', false), set_config('fw.user_id', 'bob', false), set_config('fw.identity_verified', repeat('0', 64), false)`);
      return run(trx, 'select title from notes');
    });
    await expect(forged).rejects.toMatchObject({ code: '42501' });
  });

  it('cannot change its tenant after a statement verified it, even with the tag copied along', async () => {
    const copied = asAlice(async (trx) => {
      await trx.selectFrom('notes').select('title').execute();
      await run(trx, `select set_config('fw.tenant_id', '${bob.tenantId}', true), set_config('fw.identity_verified', current_setting('fw.identity_verified'), true)`);
      return trx.selectFrom('notes').select('title').execute();
    });
    await expect(copied).rejects.toMatchObject({ code: '42501' });
  });

  it('cannot insert a row into another tenant', async () => {
    await expect(asAlice((trx) => run(trx, `insert into notes (title, tenant_id) values ('planted', '${bob.tenantId}')`), false)).rejects.toMatchObject({ code: '42501' });
    const bobs = await db.transaction({ readOnly: true, auth: bob }, (trx) => trx.selectFrom('notes').select('title').execute());
    expect(bobs.map((r) => r.title).sort()).toEqual(['b1', 'b2', 'b3']);
  });

  it('cannot write an outbox row at all — not for someone else, not as itself, not through fw’s function without fw’s proof', async () => {
    const plant = (tenant: string, user: string) =>
      asAlice((trx) => run(trx, `insert into _fw_outbox (event, payload, tenant_id, user_id) values ('note.planted', '{}', '${tenant}', '${user}')`), false);
    await expect(plant(bob.tenantId!, 'bob')).rejects.toMatchObject({ code: '42501' });
    await expect(plant(alice.tenantId!, 'alice')).rejects.toMatchObject({ code: '42501' });
    const rows = JSON.stringify([{ event: 'note.planted', payload: {}, key: randomUUID(), trace_id: null, available_at: null }]);
    await expect(asAlice((trx) => run(trx, `select _fw.enqueue('${rows}', null)`), false)).rejects.toMatchObject({ code: '42501' });
    await expect(asAlice((trx) => run(trx, `select _fw.enqueue('${rows}', '${'ab'.repeat(32)}')`), false)).rejects.toMatchObject({ code: '42501' });
    // Nor from outside fw's transaction (no claim: no identity, and no proof to match).
    await expect(asAlice(async (trx) => (await run(trx, "select set_config('fw.identity_verified', '', true)"), run(trx, `select _fw.enqueue('${rows}', null)`)), false)).rejects.toMatchObject({ code: '42501' });
    const written = await sql<{ n: number }>`select count(*)::int as n from _fw_outbox where event = 'note.planted'`.execute(db.admin);
    expect(written.rows[0]!.n).toBe(0);
  });

  it('cannot read fw secrets, before or after RESET ROLE', async () => {
    await expect(asAlice((trx) => run(trx, 'select value from _fw.secrets'))).rejects.toMatchObject({ code: '42501' });
    await expect(asAlice(async (trx) => (await run(trx, 'reset role'), run(trx, 'select value from _fw.secrets')))).rejects.toMatchObject({ code: '42501' });
  });

  it('cannot stack statements: the string is refused whole, naming the entry, and nothing of it runs', async () => {
    // The injection that wrote an outbox row with no identity from a read-only query (issue #27).
    const stacked = `commit; set role ${APP_ROLE}; insert into _fw_outbox (event, payload) values ('stacked.write', '{}')`;
    await expect(asAlice((trx) => run(trx, stacked))).rejects.toMatchObject({ code: 'internal', message: expect.stringMatching(/^query search sent COMMIT/) });
    const hidden = `select 1; ${stacked}`;
    await expect(asAlice((trx) => run(trx, hidden))).rejects.toMatchObject({ code: 'internal', message: expect.stringMatching(/^query search sent several SQL statements in one call/) });
    await expect(asAlice(async (trx) => (await trx.selectFrom('notes').select('title').execute(), run(trx, hidden)))).rejects.toMatchObject({ code: 'internal' });
    const written = await sql<{ n: number }>`select count(*)::int as n from _fw_outbox where event = 'stacked.write'`.execute(db.admin);
    expect(written.rows[0]!.n).toBe(0);
  });

  it.each(['commit', 'COMMIT AND CHAIN', 'end', 'abort', 'rollback', 'rollback work', '/* x */ begin', 'start transaction', "prepare transaction 'x'", '-- c\n commit'])(
    'refuses %j before sending it: a handler cannot end or start a transaction',
    async (statement) => {
      await expect(asAlice(async (trx) => (await trx.selectFrom('notes').select('title').execute(), run(trx, statement)), false)).rejects.toMatchObject({
        code: 'internal',
        message: expect.stringMatching(/^query search sent (COMMIT|END|ABORT|ROLLBACK|BEGIN|START TRANSACTION|PREPARE TRANSACTION), which would end or start a transaction/),
      });
    },
  );

  it('lets a handler use savepoints and ROLLBACK TO them', async () => {
    const titles = await asAlice(async (trx) => {
      await run(trx, 'savepoint attempt');
      await expect(run(trx, "insert into notes (id, title) values ('not-a-uuid', 'x')")).rejects.toMatchObject({ code: '22P02' });
      await run(trx, 'rollback to savepoint attempt');
      return trx.selectFrom('notes').select('title').orderBy('title').execute();
    }, false);
    expect(titles.map((r) => r.title)).toEqual(['a1', 'a2']);
  });

  it('fails closed without a verified identity: a tenant table shows nothing, nothing can be written', async () => {
    const cleared = `select set_config('fw.kind', '', true), set_config('fw.tenant_id', '', true), set_config('fw.user_id', '', true), set_config('fw.role', '', true), set_config('fw.identity_verified', '', true)`;
    const seen = await asAlice(async (trx) => {
      await run(trx, cleared);
      return {
        notes: (await trx.selectFrom('notes').select('title').execute()).length,
        announcements: (await trx.selectFrom('announcements').select('text').execute()).length,
        verified: (await sql<{ v: boolean }>`select _fw.verified() as v`.execute(trx)).rows[0]!.v,
      };
    });
    expect(seen).toEqual({ notes: 0, announcements: 0, verified: false });
    for (const write of [
      "insert into _fw_outbox (event, payload) values ('no.identity', '{}')",
      "insert into announcements (text) values ('no identity')",
      "insert into notes (title, tenant_id) values ('x', gen_random_uuid())",
      "select _fw_live_record('notes', null)",
    ]) {
      await expect(asAlice(async (trx) => (await run(trx, cleared), run(trx, write)), false)).rejects.toMatchObject({ code: '42501' });
    }
    // The same with no fw transaction at all: a session of the request login that sets the app role.
    const login = { role: requestLoginRole(new URL(url).pathname.slice(1)), password: (await databaseSecret(db.admin, 'request.login')).toString('hex') };
    const raw = new pg.Client({ connectionString: requestLoginUrl(url, login) });
    await raw.connect();
    try {
      await raw.query(`set role ${APP_ROLE}`);
      expect((await raw.query('select title from notes')).rows).toEqual([]);
      expect((await raw.query('select text from announcements')).rows).toEqual([]);
      await expect(raw.query("insert into _fw_outbox (event, payload) values ('no.identity', '{}')")).rejects.toMatchObject({ code: '42501' });
      await expect(raw.query("insert into announcements (text) values ('no identity')")).rejects.toMatchObject({ code: '42501' });
    } finally {
      await raw.end();
    }
    const written = await sql<{ n: number }>`select count(*)::int as n from _fw_outbox where event = 'no.identity'`.execute(db.admin);
    expect(written.rows[0]!.n).toBe(0);
  });

  it('refuses a proof made for another transaction, and a second claim in the same one', async () => {
    const key = await databaseSecret(db.admin, IDENTITY_SECRET);
    // What a log with bound parameters shows of bob's request: his identity and the proof fw sent.
    const bobs = await db.transaction({ readOnly: true, auth: bob }, async (trx) => (await sql<{ pid: number; counter: string; next: string }>`select * from _fw.request_session()`.execute(trx)).rows[0]!);
    const logged = identityProof(key, { pid: bobs.pid, counter: bobs.counter, claim: BigInt(bobs.next) - 1n }, { kind: 'user', tenantId: bob.tenantId, userId: 'bob', role: null });
    const claim = `select _fw.claim('user', '${bob.tenantId}', 'bob', null, '${logged}')`;
    // The next transaction on the same session (pool of one) replays it: already claimed…
    await expect(asAlice((trx) => run(trx, claim))).rejects.toMatchObject({ code: 'FW002' });
    // …and with the tag cleared first, the proof names a transaction that is over.
    const replayed = asAlice(async (trx) => {
      await run(trx, "select set_config('fw.identity_verified', '', true)");
      await run(trx, claim);
      return trx.selectFrom('notes').select('title').execute();
    });
    await expect(replayed).rejects.toMatchObject({ code: 'FW001' });
    // The replayed proof was the real one: the same computation for the counter's current value — which
    // needs the key, which SQL cannot read — is accepted. Only the spent value made the replay worthless.
    const withKey = await asAlice(async (trx) => {
      await run(trx, "select set_config('fw.identity_verified', '', true)");
      const now = (await sql<{ pid: number; counter: string; next: string }>`select * from _fw.request_session()`.execute(trx)).rows[0]!;
      const fresh = identityProof(key, { pid: now.pid, counter: now.counter, claim: BigInt(now.next) }, { kind: 'user', tenantId: bob.tenantId, userId: 'bob', role: null });
      await run(trx, `select _fw.claim('user', '${bob.tenantId}', 'bob', null, '${fresh}')`);
      return (await trx.selectFrom('notes').select('title').execute()).map((r) => r.title).sort();
    });
    expect(withKey).toEqual(['b1', 'b2', 'b3']);
  });

  it('learns no other request’s identity, proof or values from pg_stat_activity after RESET ROLE', async () => {
    const wide = await createDatabase({ url, poolSize: 3 });
    const carol: Auth = { kind: 'user', userId: `carol-${randomBytes(4).toString('hex')}`, tenantId: randomUUID(), role: 'auditor' };
    let stop = false;
    // Carol's requests run on the other connections, over and over, while alice's handler harvests.
    const victims = Promise.all(
      [0, 1].map(async () => {
        while (!stop) await wide.transaction({ readOnly: true, auth: carol }, (trx) => trx.selectFrom('notes').select('title').execute());
      }),
    );
    try {
      const harvested = await wide.transaction({ readOnly: false, auth: alice, label: 'command harvest' }, async (trx) => {
        await run(trx, 'reset role');
        await run(trx, 'create temp table seen (pid int, query text)');
        // Polls until it has seen other requests' claims many times (a positive signal that the window
        // was watched), at most a bounded number of times.
        await run(
          trx,
          `do $$ declare claims int := 0; begin
             for i in 1..200000 loop
               perform pg_stat_clear_snapshot();
               insert into seen select pid, query from pg_stat_activity where pid <> pg_backend_pid() and usename = session_user and query <> '';
               select count(*) into claims from seen where query like '%"_fw"."claim"%';
               exit when claims >= 50;
             end loop; end $$`,
        );
        return (await sql<{ pid: number; query: string }>`select distinct pid, query from seen`.execute(trx)).rows;
      });
      const texts = harvested.map((row) => row.query);
      expect(texts.filter((text) => text.includes('"_fw"."claim"')).length).toBeGreaterThan(0);
      for (const text of texts) {
        expect(text).not.toContain(carol.tenantId);
        expect(text).not.toContain(carol.userId);
        expect(text).not.toContain('auditor');
        expect(text).not.toMatch(/[0-9a-f]{64}/);
      }
    } finally {
      stop = true;
      await victims;
      await wide.close();
    }
  });

  it('leaves no session state for the next request on the same connection', async () => {
    const marker = `leak_${randomBytes(4).toString('hex')}`;
    await asAlice(async (trx) => {
      for (const statement of [`set application_name = '${marker}'`, 'set search_path = pg_temp, public', 'create temp table notes (title text)', `insert into notes values ('${marker}')`, 'select pg_advisory_lock(4242)']) {
        await run(trx, statement);
      }
      return null;
    }, false);
    // A read leaves only what a rollback keeps (session locks): the next claim releases them.
    await asAlice((trx) => run(trx, 'select pg_advisory_lock(4343)'));
    const next = await db.transaction({ readOnly: true, auth: bob }, async (trx) => ({
      applicationName: (await sql<{ v: string }>`select current_setting('application_name') as v`.execute(trx)).rows[0]!.v,
      temp: (await sql<{ t: string | null }>`select to_regclass('pg_temp.notes')::text as t`.execute(trx)).rows[0]!.t,
      titles: (await sql<{ title: string }>`select title from notes order by title`.execute(trx)).rows.map((r) => r.title),
      locks: (await sql<{ n: number }>`select count(*)::int as n from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()`.execute(trx)).rows[0]!.n,
    }));
    expect(next).toEqual({ applicationName: '', temp: null, titles: ['b1', 'b2', 'b3'], locks: 0 });
  });

  it('keeps identity values whole whatever the last request left in the session: they are bound parameters', async () => {
    await asAlice(async (trx) => {
      for (const statement of ['set standard_conforming_strings = off', 'set backslash_quote = on', 'set escape_string_warning = off']) await run(trx, statement);
      return null;
    }, false);
    const carol: Auth = { kind: 'user', userId: String.raw`carol\', true), set_config($$fw.role$$, $$admin$$, true) --`, tenantId: alice.tenantId, role: null };
    const who = await db.transaction({ readOnly: true, auth: carol }, async (trx) => (await sql<{ user: string; role: string | null }>`select _fw.user_id() as user, _fw.role() as role`.execute(trx)).rows[0]);
    expect(who).toEqual({ user: carol.userId, role: null });
  });
});
