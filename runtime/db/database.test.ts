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
  const user = `fw_t_user_${randomBytes(4).toString('hex')}`;
  let drop: () => Promise<void>;
  let dropUsers: () => Promise<void>;
  let ownerUrl: string;
  let userUrl: string;
  let owner: FwDatabase;

  beforeAll(async () => {
    const pg = await createTestPostgresDatabase();
    drop = pg.drop;
    ownerUrl = pg.url;
    owner = await createDatabase({ url: ownerUrl });
    // The user's own database: one database has one owner (fw's schema there is the user's).
    const users = await createTestPostgresDatabase();
    dropUsers = users.drop;
    const usersName = new URL(users.url).pathname.slice(1);
    await sql.raw(`create role ${user} login; grant all on database "${usersName}" to ${user}`).execute(owner.admin);
    const { default: pgModule } = await import('pg');
    const inUsers = new pgModule.Client({ connectionString: users.url });
    await inUsers.connect();
    await inUsers.query(`grant create on schema public to ${user}`);
    await inUsers.end();
    const url = new URL(users.url);
    url.username = user;
    userUrl = url.toString();
  });
  afterAll(async () => {
    await owner?.close();
    await drop?.();
    await dropUsers?.();
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: testDatabaseUrl });
    await client.connect();
    await client.query(`drop role if exists ${user}`);
    await client.end();
  });

  it('fails at start-up, naming the GRANT to run, when the user cannot switch to the app role', async () => {
    await expect(createDatabase({ url: userUrl })).rejects.toMatchObject({ kind: 'database_role', suggestions: [expect.stringContaining(`GRANT ${APP_ROLE} TO "${user}"`)] });
  });

  it('fails at start-up, naming what to run, when the owner may not create the request login', async () => {
    await sql.raw(`grant ${APP_ROLE} to ${user}`).execute(owner.admin);
    await expect(createDatabase({ url: userUrl })).rejects.toMatchObject({ kind: 'database_role', suggestions: [expect.stringContaining('CREATE ROLE "fw_login_')] });
  });

  it('as a CREATEROLE owner: recovers its pooled connection after a prelude that failed mid-transaction', async () => {
    await sql.raw(`grant ${APP_ROLE} to ${user}; alter role ${user} createrole`).execute(owner.admin);
    const db = await createDatabase({ url: userUrl, poolSize: 1 });
    const login = requestLoginRole(new URL(userUrl).pathname.slice(1));
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
