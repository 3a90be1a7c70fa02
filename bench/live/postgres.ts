/** A fresh PostgreSQL database for the benchmark: created and migrated by fw; dropped afterwards. */
import { type BenchPostgres, createThrowawayPostgres } from '../http/postgres.ts';
import { prepareBenchDatabase } from './app.ts';

export type { BenchPostgres };

export function createBenchPostgres(serverUrl: string): Promise<BenchPostgres> {
  return createThrowawayPostgres(serverUrl, { bench: 'live', prepare: prepareBenchDatabase, hint: 'Set BENCH_DATABASE_URL.' });
}
