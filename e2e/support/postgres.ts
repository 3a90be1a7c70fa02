import { randomBytes } from 'node:crypto';
import { createDatabase, type FwDatabase } from '../../runtime/db/database.ts';
import { requestLoginRole } from '../../runtime/db/request-login.ts';

export const testDatabaseUrl = process.env.FW_TEST_DATABASE_URL;

/**
 * A fresh PostgreSQL database for one suite, so parallel test files never share tables.
 * Returns its URL and a function that drops it.
 */
export async function createTestPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  if (!testDatabaseUrl) throw new Error('FW_TEST_DATABASE_URL is not set');
  const { default: pg } = await import('pg');
  const name = `fw_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(testDatabaseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: testDatabaseUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      // The request login fw made for this database (roles outlive databases).
      await client.query(`drop role if exists ${requestLoginRole(name)}`);
      await client.end();
    },
  };
}

/** The databases every database suite runs on: PGlite always, PostgreSQL when configured. */
export const databaseTargets = [
  { name: 'pglite', enabled: true },
  { name: 'postgres', enabled: Boolean(testDatabaseUrl) },
] as const;

/**
 * A fresh database of a target for one suite: a throwaway PostgreSQL database (dropped by `drop`,
 * after `db.close()`), or an in-memory PGlite (`drop` does nothing).
 */
export async function openTestDatabase(target: (typeof databaseTargets)[number]): Promise<{ db: FwDatabase; drop(): Promise<void> }> {
  if (target.name === 'postgres') {
    const pg = await createTestPostgresDatabase();
    return { db: await createDatabase({ url: pg.url }), drop: pg.drop };
  }
  return { db: await createDatabase({ dataDir: 'memory://' }), drop: async () => {} };
}
