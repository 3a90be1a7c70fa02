/** A fresh PostgreSQL database for the benchmark: created and migrated by fw; dropped afterwards. */
import { randomBytes } from 'node:crypto';
import { createDatabase } from '../../runtime/db/database.ts';
import { prepareBenchDatabase } from './app.ts';

export interface BenchPostgres {
  name: string;
  url: string;
  serverVersion: string;
  drop(): Promise<void>;
}

export async function createBenchPostgres(serverUrl: string): Promise<BenchPostgres> {
  const { default: pg } = await import('pg');
  const name = `fw_bench_live_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(`bench/live: cannot reach PostgreSQL at ${redact(serverUrl)} (${(error as Error).message}). Set BENCH_DATABASE_URL.`);
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
      await prepareBenchDatabase(db);
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
