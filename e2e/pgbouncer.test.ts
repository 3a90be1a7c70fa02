/**
 * fw behind a transaction pooler, as production often runs it: Debian's PgBouncer in
 * `pool_mode = transaction` in front of the test PostgreSQL (e2e/support/pgbouncer.ts).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../runtime/db/database.ts';
import { IDENTITY_SECRET, identityProof } from '../runtime/db/request-identity.ts';
import { databaseSecret } from '../runtime/db/secrets.ts';
import { applyMigration, ensureSystemTables } from '../runtime/db/migrate.ts';
import type { Auth } from '../runtime/core/entry-types.ts';
import { createWakeups } from '../runtime/live/wakeups.ts';
import { defineSchema, t, table } from '../runtime/core/schema.ts';
import { createTestApp, post, runFw, startFw } from './support/app.ts';
import { openEventStream } from './support/live-server.ts';
import { hasPgBouncer, type RunningPgBouncer, startPgBouncer } from './support/pgbouncer.ts';
import { createTestPostgresDatabase } from './support/postgres.ts';
import { until } from './support/until.ts';

const schema = defineSchema({ items: table({ id: t.uuid().primaryKey().defaultRandom(), label: t.text() }) });
const userIn = (tenantId: string): Auth => ({ kind: 'user', userId: 'u', tenantId, role: null });

describe.skipIf(!hasPgBouncer)('behind PgBouncer in transaction mode (PostgreSQL)', () => {
  let bouncer: RunningPgBouncer;
  beforeAll(async () => {
    bouncer = await startPgBouncer({ serverPoolSize: 3 });
  });
  afterAll(async () => {
    await bouncer?.stop();
  });

  it('request transactions prove their identity in whichever server session the pooler gives them', async () => {
    const target = await createTestPostgresDatabase();
    // More request connections than server sessions: consecutive transactions change sessions.
    const db = await createDatabase({ url: bouncer.pooled(target.url), poolSize: 8 });
    try {
      await applyMigration(db, schema);
      const tenants = Array.from({ length: 6 }, () => randomUUID());
      await Promise.all(
        tenants.flatMap((tenantId, t) =>
          Array.from({ length: 20 }, (_, i) => db.transaction({ readOnly: false, auth: userIn(tenantId) }, (trx) => trx.insertInto('items').values({ label: `${t}-${i}` }).execute())),
        ),
      );
      const seen = await Promise.all(
        tenants.map((tenantId) => db.transaction({ readOnly: true, auth: userIn(tenantId) }, (trx) => trx.selectFrom('items').select('label').orderBy('label').execute())),
      );
      seen.forEach((rows, t) => expect(rows.map((r) => r.label).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `${t}-${i}`).sort()));

      // Still unforgeable there: a tenant changed inside the transaction is refused.
      const [alice, bob] = tenants;
      await expect(
        db.transaction({ readOnly: true, auth: userIn(alice!) }, async (trx) => {
          await sql.raw(`select set_config('fw.tenant_id', '${bob}', true)`).execute(trx);
          return sql.raw('select label from items').execute(trx);
        }),
      ).rejects.toMatchObject({ code: '42501' });
    } finally {
      await db.close();
      await target.drop();
    }
  });

  it('an injection that reads pg_stat_activity learns no identity there, and a logged proof cannot be replayed', async () => {
    const target = await createTestPostgresDatabase();
    const db = await createDatabase({ url: bouncer.pooled(target.url), directUrl: target.url, poolSize: 6 });
    const carol: Auth = { kind: 'user', userId: `carol-${randomUUID().slice(0, 8)}`, tenantId: randomUUID(), role: 'auditor' };
    let stop = false;
    try {
      await applyMigration(db, schema);
      await db.transaction({ readOnly: false, auth: carol }, (trx) => trx.insertInto('items').values({ label: 'carol-secret' }).execute());
      const victims = Promise.all(
        [0, 1].map(async () => {
          while (!stop) await db.transaction({ readOnly: true, auth: carol }, (trx) => trx.selectFrom('items').select('label').execute());
        }),
      );
      try {
        const alice = userIn(randomUUID());
        // The harvest: RESET ROLE, then watch every other session of the login role through the pooler.
        const texts = await db.transaction({ readOnly: false, auth: alice }, async (trx) => {
          await sql.raw('reset role').execute(trx);
          await sql.raw('create temp table seen (query text)').execute(trx);
          await sql
            .raw(
              `do $$ declare claims int := 0; begin
                 for i in 1..200000 loop
                   perform pg_stat_clear_snapshot();
                   insert into seen select query from pg_stat_activity where pid <> pg_backend_pid() and usename = session_user and query <> '';
                   select count(*) into claims from seen where query like '%"_fw"."claim"%';
                   exit when claims >= 20;
                 end loop; end $$`,
            )
            .execute(trx);
          return (await sql<{ query: string }>`select distinct query from seen`.execute(trx)).rows.map((row) => row.query);
        });
        expect(texts.some((text) => text.includes('"_fw"."claim"'))).toBe(true);
        for (const text of texts) expect(text).not.toMatch(new RegExp(`${carol.tenantId}|${carol.userId}|auditor|[0-9a-f]{64}`));

        // The replay: carol's proof as a log with bound parameters shows it, claimed again through the pooler.
        const key = await databaseSecret(db.admin, IDENTITY_SECRET);
        const hers = await db.transaction({ readOnly: true, auth: carol }, async (trx) => (await sql<{ pid: number; counter: string; next: string }>`select * from _fw.request_session()`.execute(trx)).rows[0]!);
        const logged = identityProof(key, { pid: hers.pid, counter: hers.counter, claim: BigInt(hers.next) - 1n }, { kind: 'user', tenantId: carol.tenantId, userId: carol.userId, role: 'auditor' });
        for (let attempt = 0; attempt < 5; attempt++) {
          const replayed = db.transaction({ readOnly: true, auth: alice }, async (trx) => {
            await sql.raw("select set_config('fw.identity_verified', '', true)").execute(trx);
            await sql`select _fw.claim('user', ${carol.tenantId}, ${carol.userId}, 'auditor', ${logged})`.execute(trx);
            return trx.selectFrom('items').select('label').execute();
          });
          await expect(replayed).rejects.toMatchObject({ code: 'FW001' });
        }
      } finally {
        stop = true;
        await victims;
      }
    } finally {
      await db.close();
      await target.drop();
    }
  });

  it('without a direct URL, the live listener finds out it is deaf, says so with the fix, and polls fast', async () => {
    const target = await createTestPostgresDatabase();
    const db = await createDatabase({ url: bouncer.pooled(target.url), poolSize: 2 });
    const wakeups = createWakeups(db, { onWake: () => {}, pollIntervalMs: 50, safetyPollIntervalMs: 600_000, probeTimeoutMs: 1000 });
    try {
      await wakeups.start();
      const deaf = await until(async () => (wakeups.status().listener === 'deaf' ? wakeups.status() : undefined), 'the listener to be found deaf');
      expect(deaf).toMatchObject({ mode: 'listen', notifications: 0, probesHeard: 0, problem: { code: 'listener_deaf', fix: expect.stringContaining('FW_DIRECT_DATABASE_URL') } });
      // Polled at the fast interval: with a safety interval of ten minutes, these polls prove it.
      const polls = deaf.polls;
      await until(async () => wakeups.status().polls >= polls + 3, 'fast polls while deaf');
    } finally {
      await wakeups.close();
      await db.close();
      await target.drop();
    }
  });

  it('with FW_DIRECT_DATABASE_URL, the listener hears its probe and the writes made through the pooler', async () => {
    const target = await createTestPostgresDatabase();
    const db = await createDatabase({ url: bouncer.pooled(target.url), directUrl: target.url, poolSize: 2 });
    let wakes = 0;
    const wakeups = createWakeups(db, { onWake: (reason) => reason === 'notify' && wakes++, safetyPollIntervalMs: 600_000, probeTimeoutMs: 30_000 });
    try {
      // LISTEN and the owner's work go to the direct URL.
      expect(db.driver).toEqual({ kind: 'postgres', url: target.url });
      await applyMigration(db, schema);
      await ensureSystemTables(db);
      await wakeups.start();
      await until(async () => wakeups.status().probesHeard >= 1, 'the listener to hear its probe');
      await db.transaction({ readOnly: false, auth: userIn(randomUUID()) }, (trx) => trx.insertInto('items').values({ label: 'x' }).execute());
      await until(async () => wakes >= 1, 'the write\'s NOTIFY');
      expect(wakeups.status()).toMatchObject({ mode: 'listen', listener: 'connected', problem: null });
    } finally {
      await wakeups.close();
      await db.close();
      await target.drop();
    }
  });

  describe('fw dev on an app whose DATABASE_URL is the pooler', () => {
    const tenant = randomUUID();
    const devAuth = { 'x-fw-user-id': 'user-1', 'x-fw-tenant-id': tenant, 'x-fw-role': 'member' };

    /**
     * `fw dev --api-only` with `env`, a live stream on liveNotes, and a note created: the stream shows it.
     * Then `fw live status` until `settled` accepts it, and /health.
     */
    async function liveRoundTrip(env: Record<string, string>, settled: (status: any) => boolean) {
      const app = await createTestApp();
      const dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir, env });
      const serverUrl = dev.ready.serverUrl as string;
      try {
        const stream = await openEventStream(`${serverUrl}/live/liveNotes`, { headers: devAuth });
        try {
          expect((await stream.next()).json.result).toEqual([]);
          expect((await post(serverUrl, '/commands/createNote', { title: 'through the pooler' }, devAuth)).status).toBe(200);
          const update = await stream.nextWhere((e) => e.json.result?.length === 1);
          expect(update.json.result.map((n: { title: string }) => n.title)).toEqual(['through the pooler']);
        } finally {
          stream.close();
        }
        const status = await until(async () => {
          const run = await runFw(['live', 'status', '--json'], { cwd: app.dir });
          const parsed = JSON.parse(run.stdout);
          return settled(parsed) ? parsed : undefined;
        }, 'fw live status to settle');
        const health = (await (await fetch(`${serverUrl}/health`)).json()) as Record<string, unknown>;
        const text = await runFw(['live', 'status'], { cwd: app.dir });
        return { health, status, statusText: text.stderr, stderr: dev.stderr() };
      } finally {
        await dev.stop();
        await app.remove();
      }
    }

    it('without the direct URL: live updates still arrive (polled), /health and fw live status name listener_deaf and its fix', async () => {
      const target = await createTestPostgresDatabase();
      try {
        const seen = await liveRoundTrip({ DATABASE_URL: bouncer.pooled(target.url) }, (status) => status.reader.wakeups.listener === 'deaf');
        const problem = { code: 'listener_deaf', message: expect.stringContaining('transaction pooler'), fix: expect.stringContaining('FW_DIRECT_DATABASE_URL') };
        expect(seen.health).toMatchObject({ status: 'ok', database: 'postgres', warnings: [problem] });
        expect(seen.status.reader.wakeups).toMatchObject({ listener: 'deaf', notifications: 0, problem });
        expect(seen.statusText).toContain('listener_deaf: The live listener is connected but does not hear its own NOTIFY');
        expect(seen.stderr).toContain('fw live: listener_deaf');
      } finally {
        await target.drop();
      }
    });

    it('with FW_DIRECT_DATABASE_URL: the update arrives by NOTIFY and nothing is wrong', async () => {
      const target = await createTestPostgresDatabase();
      try {
        const seen = await liveRoundTrip({ DATABASE_URL: bouncer.pooled(target.url), FW_DIRECT_DATABASE_URL: target.url }, (status) => status.reader.wakeups.probesHeard >= 1);
        expect(seen.health).toEqual({ status: 'ok', version: expect.any(String), database: 'postgres' });
        expect(seen.status.reader.wakeups).toMatchObject({ listener: 'connected', problem: null });
        expect(seen.status.reader.wakeups.notifications).toBeGreaterThanOrEqual(1);
        expect(seen.status.reader.wakeups.probesHeard).toBeGreaterThanOrEqual(1);
      } finally {
        await target.drop();
      }
    });
  });
});

// A pooler set up by hand often knows only the owner (an auth_file line, no auth_query): fw's request
// login, or a user that is not in the file, is refused. fw says which connection, which variable, and
// the fix in one line each, not a row-level security puzzle.
describe.skipIf(!hasPgBouncer)('a PgBouncer that refuses the sign-in', () => {
  let bouncer: RunningPgBouncer;
  let app: Awaited<ReturnType<typeof createTestApp>>;
  beforeAll(async () => {
    bouncer = await startPgBouncer({ authQuery: false });
    app = await createTestApp('minimal-web');
  });
  afterAll(async () => {
    await bouncer?.stop();
    await app?.remove();
  });

  const failure = async (args: string[], env: Record<string, string>) => {
    const run = await runFw([...args, '--json'], { cwd: app.dir, env });
    expect(run.code, run.stdout + run.stderr).toBe(1);
    return JSON.parse(run.stdout) as { ok: boolean; kind: string; message: string; suggestions: string[] };
  };

  it("names fw's request login the pooler does not know, and how to make it known (fw db status, fw db migrate)", async () => {
    const target = await createTestPostgresDatabase();
    try {
      const env = { DATABASE_URL: bouncer.pooled(target.url) };
      for (const args of [['db', 'status'], ['db', 'migrate']]) {
        const report = await failure(args, env);
        expect(report).toMatchObject({ ok: false, kind: 'database_auth' });
        expect(report.message).toMatch(/^The pooler at DATABASE_URL refused fw's request login fw_login_\w+ \(fw_login_\w+@127\.0\.0\.1:\d+\/\w+\): "trust" authentication failed\.$/);
        expect(report.suggestions).toEqual([
          expect.stringMatching(/^PgBouncer must know fw_login_\w+: set auth_user \(with auth_query\) .* auth_file \(docs\/deploy\.md#behind-a-connection-pooler\)\.$/),
          'Behind a transaction pooler, also set FW_DIRECT_DATABASE_URL to PostgreSQL itself: migrations and LISTEN need a session of their own.',
        ]);
      }
    } finally {
      await target.drop();
    }
  });

  it('names the variable whose user the pooler refuses, and never its password', async () => {
    const target = await createTestPostgresDatabase();
    try {
      const stranger = new URL(bouncer.pooled(target.url));
      stranger.username = 'stranger';
      stranger.password = 'not-to-be-printed';
      const pooled = await failure(['db', 'status'], { DATABASE_URL: stranger.toString() });
      expect(pooled.kind).toBe('database_auth');
      expect(pooled.message).toMatch(/^The pooler at DATABASE_URL refused fw's sign-in \(stranger@127\.0\.0\.1:\d+\/\w+\): "\w+" authentication failed\.$/);
      expect(pooled.suggestions[1]).toContain('Set FW_DIRECT_DATABASE_URL to PostgreSQL itself (not the pooler)');
      // The direct URL pointed at the pooler with a user it does not know: that variable is named.
      const direct = await failure(['db', 'status'], { DATABASE_URL: bouncer.pooled(target.url), FW_DIRECT_DATABASE_URL: stranger.toString() });
      expect(direct.message).toMatch(/^The pooler at FW_DIRECT_DATABASE_URL refused fw's sign-in \(stranger@/);
      expect(direct.suggestions[1]).toBe('FW_DIRECT_DATABASE_URL must point at PostgreSQL itself (or a session-mode pooler), for migrations and LISTEN (docs/deploy.md#behind-a-connection-pooler).');
      for (const report of [pooled, direct]) expect(JSON.stringify(report)).not.toContain('not-to-be-printed');
    } finally {
      await target.drop();
    }
  });
});
