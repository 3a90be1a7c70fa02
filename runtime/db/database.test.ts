import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPostgresDatabase, testDatabaseUrl } from '../../e2e/support/postgres.ts';
import { APP_ROLE, createDatabase, type FwDatabase } from './database.ts';
import { requestLoginRole } from './request-login.ts';

const auth = { kind: 'user', userId: 'u', tenantId: '00000000-0000-4000-8000-000000000001', role: null } as const;

describe('createDatabase options', () => {
  it('refuses a statement timeout that is not a whole number of milliseconds', async () => {
    await expect(createDatabase({ statementTimeoutMs: Number.NaN })).rejects.toThrow(/statementTimeoutMs/);
  });
});

describe.skipIf(!testDatabaseUrl)('request transactions as a non-superuser on PostgreSQL', () => {
  let drop: () => Promise<void>;
  let owner: FwDatabase;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    const pg = await createTestPostgresDatabase();
    drop = pg.drop;
    owner = await createDatabase({ url: pg.url });
  });
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await owner?.close();
    await drop?.();
  });

  /**
   * A login role of its own that owns a database of its own (one database has one owner: fw's schema
   * there is the user's), with `grants` run for it as the superuser — each test starts from its own.
   */
  async function ownUser(grants: (user: string) => string): Promise<{ user: string; url: string }> {
    const user = `fw_t_user_${randomBytes(4).toString('hex')}`;
    const users = await createTestPostgresDatabase();
    const usersName = new URL(users.url).pathname.slice(1);
    await sql.raw(`create role ${user} login; grant all on database "${usersName}" to ${user}`).execute(owner.admin);
    cleanups.push(async () => {
      await users.drop();
      await sql.raw(`drop role if exists ${user}`).execute(owner.admin);
    });
    const { default: pgModule } = await import('pg');
    const inUsers = new pgModule.Client({ connectionString: users.url });
    await inUsers.connect();
    await inUsers.query(`grant create on schema public to ${user}`);
    await inUsers.end();
    const extra = grants(user);
    if (extra) await sql.raw(extra).execute(owner.admin);
    const url = new URL(users.url);
    url.username = user;
    return { user, url: url.toString() };
  }

  it('fails at start-up, naming the GRANT to run, when the user cannot switch to the app role', async () => {
    const { user, url } = await ownUser(() => '');
    await expect(createDatabase({ url })).rejects.toMatchObject({ kind: 'database_role', suggestions: [expect.stringContaining(`GRANT ${APP_ROLE} TO "${user}"`)] });
  });

  it('fails at start-up, naming what to run, when the owner may not create the request login', async () => {
    const { url } = await ownUser((user) => `grant ${APP_ROLE} to ${user}`);
    await expect(createDatabase({ url })).rejects.toMatchObject({ kind: 'database_role', suggestions: [expect.stringContaining('CREATE ROLE "fw_login_')] });
  });

  it('as a CREATEROLE owner: recovers its pooled connection after a prelude that failed mid-transaction', async () => {
    const { url } = await ownUser((user) => `grant ${APP_ROLE} to ${user}; alter role ${user} createrole`);
    const db = await createDatabase({ url, poolSize: 1 });
    const login = requestLoginRole(new URL(url).pathname.slice(1));
    try {
      await sql.raw(`revoke ${APP_ROLE} from ${login}`).execute(owner.admin);
      await expect(db.transaction({ readOnly: true, auth }, async (trx) => sql`select 1`.execute(trx))).rejects.toThrow(/permission denied/);
      await sql.raw(`grant ${APP_ROLE} to ${login}`).execute(owner.admin);
      // The single pooled connection must not be stuck in the aborted transaction.
      const result = await db.transaction({ readOnly: true, auth }, async (trx) => sql<{ who: string }>`select current_user as who`.execute(trx));
      expect(result.rows[0]?.who).toBe(APP_ROLE);
    } finally {
      await db.close();
    }
  });
});
