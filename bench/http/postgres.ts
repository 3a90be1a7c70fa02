/** A fresh PostgreSQL database for one benchmark run: created, migrated and seeded; dropped afterwards. */
import { randomBytes } from 'node:crypto';
import { createDatabase, type FwDatabase } from '../../runtime/db/database.ts';
import { prepareBenchDatabase } from './app.ts';

export interface BenchPostgres {
  name: string;
  url: string;
  serverVersion: string;
  drop(): Promise<void>;
}

/** bench/http's database. */
export function createBenchPostgres(serverUrl: string): Promise<BenchPostgres> {
  return createThrowawayPostgres(serverUrl, {
    bench: 'http',
    prepare: prepareBenchDatabase,
    hint: 'Set BENCH_DATABASE_URL, or BENCH_DATABASES=pglite to skip PostgreSQL.',
  });
}

/** A database named `fw_bench_<bench>_<random>` on `serverUrl`, prepared by `prepare` (dropped again when that fails). */
export async function createThrowawayPostgres(
  serverUrl: string,
  options: { bench: string; prepare: (db: FwDatabase) => Promise<void>; hint: string },
): Promise<BenchPostgres> {
  const { default: pg } = await import('pg');
  const name = `fw_bench_${options.bench}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(`bench/${options.bench}: cannot reach PostgreSQL at ${redact(serverUrl)} (${(error as Error).message}). ${options.hint}`);
  }
  const version = await admin.query<{ server_version: string }>('show server_version');
  await admin.query(`create database ${name}`);
  await admin.end();

  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const drop = async () => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    await client.query(`drop database if exists ${name} with (force)`);
    await client.end();
  };
  try {
    const db = await createDatabase({ url: url.toString(), poolSize: 2 });
    try {
      await options.prepare(db);
    } finally {
      await db.close();
    }
  } catch (error) {
    await drop().catch(() => undefined);
    throw error;
  }
  return { name, url: url.toString(), serverVersion: version.rows[0]?.server_version ?? 'unknown', drop };
}

function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
