import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testDatabaseUrl } from './postgres.ts';
import { until } from './until.ts';

/** Debian's PgBouncer (`apt-get install -y pgbouncer`); tests that need it skip, saying so, without it. */
export const pgbouncerPath = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((candidate) => existsSync(candidate));
export const hasPgBouncer = Boolean(pgbouncerPath && testDatabaseUrl);

export interface RunningPgBouncer {
  /** `url` (a database of the test PostgreSQL) rewritten to go through the pooler. */
  pooled(url: string): string;
  stop(): Promise<void>;
}

/**
 * PgBouncer in `pool_mode = transaction` in front of the test PostgreSQL, the way managed hosts run
 * their poolers: each transaction gets whichever server session is free. The server pool is kept
 * smaller than fw's request pool, so consecutive transactions of one client connection really do land
 * in different sessions. Users are looked up in PostgreSQL (auth_query), so fw's request login works;
 * with `authQuery: false` only the owner (in its auth_file) may sign in, as a pooler set up by hand
 * often has it.
 */
export async function startPgBouncer(options: { serverPoolSize?: number; authQuery?: boolean } = {}): Promise<RunningPgBouncer> {
  if (!pgbouncerPath || !testDatabaseUrl) throw new Error('PgBouncer or FW_TEST_DATABASE_URL is missing');
  const server = new URL(testDatabaseUrl);
  const dir = await mkdtemp(path.join(tmpdir(), 'fw-pgbouncer-'));
  const port = await freePort();
  const owner = decodeURIComponent(server.username || 'postgres');
  const files = {
    ini: path.join(dir, 'pgbouncer.ini'),
    users: path.join(dir, 'users.txt'),
  };
  await writeFile(
    files.ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'pool_mode = transaction',
      `default_pool_size = ${options.serverPoolSize ?? 3}`,
      'max_client_conn = 500',
      'auth_type = trust',
      `auth_file = ${files.users}`,
      ...(options.authQuery === false ? [] : [`auth_user = ${owner}`]),
      // pg sends these at startup; PgBouncer refuses unknown startup parameters otherwise.
      'ignore_startup_parameters = extra_float_digits,application_name,statement_timeout',
      '',
    ].join('\n'),
  );
  await writeFile(files.users, `"${owner}" ""\n`);
  // PgBouncer refuses to run as root: as root, it is started as the postgres user, who must read these.
  for (const file of [dir, files.ini, files.users]) await chmod(file, file === dir ? 0o755 : 0o644);
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(pgbouncerPath, [...(asRoot ? ['-u', 'postgres'] : []), files.ini], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));

  const pooled = (url: string) => {
    const through = new URL(url);
    through.hostname = '127.0.0.1';
    through.port = String(port);
    return through.toString();
  };
  const { default: pg } = await import('pg');
  await until(async () => {
    if (exited !== undefined) throw new Error(`pgbouncer exited with ${exited}:\n${output}`);
    const client = new pg.Client({ connectionString: pooled(server.toString()) });
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  }, 'PgBouncer to accept connections');
  return {
    pooled,
    async stop() {
      if (exited === undefined) {
        const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        await gone;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
