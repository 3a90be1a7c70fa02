import pg from 'pg';
import { type RunningFw, startFw } from './app.ts';
import { createTestPostgresDatabase } from './postgres.ts';

/**
 * `fw` processes sharing one fresh PostgreSQL database per test (several `fw start` / `fw worker`
 * processes, as a scaled-out app runs). `open()` makes the database, a client on it and `start`, which
 * runs `fw` in `dir()` with `env` and that database; `close()` (after each test) stops and drops
 * everything the test started, newest first.
 */
export function processCluster(options: { dir: () => string; env: Record<string, string> }) {
  const cleanups: Array<() => Promise<unknown>> = [];
  return {
    async open() {
      const database = await createTestPostgresDatabase();
      cleanups.push(() => database.drop());
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      cleanups.push(() => client.end());
      const env = { ...options.env, DATABASE_URL: database.url };
      return {
        env,
        start: async (args: string[]): Promise<RunningFw> => {
          const child = await startFw(args, { cwd: options.dir(), env });
          cleanups.push(() => child.stop());
          return child;
        },
        rows: async (text: string) => (await client.query(text)).rows,
      };
    },
    async close() {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    },
  };
}
