/**
 * The database's own floor under a request with an identity: what PostgreSQL spends on the
 * transaction, the role and row-level security that any safe server pays, before fw's proof is added.
 * `pgbench` (no Node, no HTTP) runs each variant's SQL against bench/http's `notes` table; the figures
 * are the backends' CPU per transaction and the throughput, against the bare statement in the same run.
 *
 *   node bench/http/floor.ts > floor.json     # ~2 min; needs pgbench on PATH (PostgreSQL's client tools)
 *
 * Variants, each one pipelined round trip (`\startpipeline`), as fw sends a read:
 * - `bare`: bench/http's bare statement, as the owner, the tenant an explicit `where`.
 * - `transaction`: the same statement inside `begin read only … rollback`.
 * - `settingsIdentity`: the transaction, `role` and the identity set as transaction-local settings
 *   (PostgREST's design, which SQL running in the request can forge), and the statement under a
 *   row-level-security policy that reads the tenant setting. fw's claim and check come on top of this.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createDatabase } from '../../runtime/db/database.ts';
import { benchPostgresUrl, positive } from './config.ts';
import { BENCH_TENANT, BENCH_USER, LIST_LIMIT, prepareBenchDatabase, STATEMENT_TIMEOUT_MS } from './app.ts';
import { createThrowawayPostgres } from './postgres.ts';
import { backendsCpuUs, snapshotCpu } from './system-cpu.ts';

const serverUrl = benchPostgresUrl();
const durationS = positive(process.env, 'BENCH_DURATION', 10);
const rounds = Math.round(positive(process.env, 'BENCH_ROUNDS', 3));
const clients = Math.round(positive(process.env, 'BENCH_FLOOR_CLIENTS', 8));

const order = `order by created_at desc, id desc limit ${LIST_LIMIT}`;
/** Each variant's statements; all but `bare` go as one pipelined round trip. */
const variants: Record<string, string[]> = {
  bare: [`select * from notes where tenant_id = '${BENCH_TENANT}' ${order}`],
  transaction: ['begin read only', `select * from notes where tenant_id = '${BENCH_TENANT}' ${order}`, 'rollback'],
  settingsIdentity: [
    'begin read only',
    `select set_config('role', 'fw_app', true), set_config('statement_timeout', '${STATEMENT_TIMEOUT_MS}', true), ` +
      `set_config('fw.trace_id', '0123456789abcdef0123456789abcdef', true), set_config('fw.kind', 'user', true), ` +
      `set_config('fw.tenant_id', '${BENCH_TENANT}', true), set_config('fw.user_id', '${BENCH_USER}', true), set_config('fw.role', '', true)`,
    `select * from notes_by_setting ${order}`,
    'rollback',
  ],
};
const pgbenchScript = (statements: string[]) =>
  `${(statements.length > 1 ? ['\\startpipeline', ...statements.map((s) => `${s};`), '\\endpipeline'] : [`${statements[0]};`]).join('\n')}\n`;

if (spawnSync('pgbench', ['--version']).status !== 0) {
  console.error('bench/floor: pgbench was not found on PATH; it comes with PostgreSQL\'s client tools (Debian: postgresql-client).');
  process.exit(1);
}

const database = await createThrowawayPostgres(serverUrl, {
  bench: 'floor',
  prepare: async (db) => {
    await prepareBenchDatabase(db);
    // A copy of `notes` whose policy reads the tenant setting directly: no claim, no check.
    await sql`create table notes_by_setting (like notes including all)`.execute(db.admin);
    await sql`insert into notes_by_setting select * from notes`.execute(db.admin);
    await sql`alter table notes_by_setting enable row level security`.execute(db.admin);
    await sql`alter table notes_by_setting force row level security`.execute(db.admin);
    await sql`create policy by_setting on notes_by_setting using (tenant_id = nullif(current_setting('fw.tenant_id', true), '')::uuid)`.execute(db.admin);
    await sql`grant select on notes_by_setting to fw_app`.execute(db.admin);
    await sql`analyze notes_by_setting`.execute(db.admin);
  },
  hint: 'Set BENCH_DATABASE_URL.',
});
const dir = await mkdtemp(join(tmpdir(), 'fw-floor-'));
const admin = await createDatabase({ url: database.url, poolSize: 1 });
const runs: Record<string, { tps: number; databaseCpuUsPerTx: number }[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
try {
  // Every variant reads the same 50 notes of the benchmark tenant (a policy that let nothing through would be cheap).
  for (const [name, statements] of Object.entries(variants)) {
    const read = statements.filter((statement) => statement.startsWith('select'));
    const count = await admin.admin.transaction().execute(async (trx) => {
      for (const statement of read.slice(0, -1)) await sql.raw(statement).execute(trx);
      const rows = await sql.raw<{ tenant_id: string }>(read.at(-1)!).execute(trx);
      return rows.rows.filter((row) => row.tenant_id === BENCH_TENANT).length;
    });
    if (count !== LIST_LIMIT) throw new Error(`bench/floor: ${name} read ${count} notes of the benchmark tenant, not ${LIST_LIMIT}.`);
  }
  for (let round = 0; round < rounds; round++) {
    for (const [name, statements] of Object.entries(variants)) {
      const file = join(dir, `${name}.sql`);
      await writeFile(file, pgbenchScript(statements));
      runs[name]!.push(await runPgbench(file));
      console.error(`bench/floor: round ${round + 1}/${rounds} ${name}: ${JSON.stringify(runs[name]!.at(-1))}`);
    }
  }
} finally {
  await admin.close();
  await database.drop();
  await rm(dir, { recursive: true, force: true });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const results = Object.fromEntries(
  Object.entries(runs).map(([name, list]) => [name, { tps: Math.round(median(list.map((r) => r.tps))), databaseCpuUsPerTx: Math.round(median(list.map((r) => r.databaseCpuUsPerTx))), rounds: list }]),
);
const bare = results.bare!;
const ratios = Object.fromEntries(
  Object.entries(results).map(([name, r]) => [name, { tpsVsBare: +(r.tps / bare.tps).toFixed(2), databaseCpuVsBare: +(r.databaseCpuUsPerTx / bare.databaseCpuUsPerTx).toFixed(2) }]),
);
console.log(JSON.stringify({ bench: 'http-floor', postgres: database.serverVersion, config: { durationS, rounds, clients }, results, ratios }, null, 2));

/** One pgbench run: `clients` connections for `durationS`; the backends' CPU is read over the run after its first seconds. */
async function runPgbench(file: string): Promise<{ tps: number; databaseCpuUsPerTx: number }> {
  const child = spawn('pgbench', ['-n', '-M', 'extended', '-c', String(clients), '-j', '2', '-T', String(durationS), '-f', file, database.url], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', resolve);
  });
  // pgbench's connections, once all are open (the deadline only bounds a hang).
  const deadline = Date.now() + 10_000;
  let pids: number[] = [];
  while (pids.length < clients && Date.now() < deadline) {
    const rows = await sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database() and application_name = 'pgbench'`.execute(admin.admin);
    pids = rows.rows.map((row) => row.pid);
  }
  const before = await snapshotCpu(database.name);
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, Math.max(1000, (durationS - 3) * 1000)));
  const after = await snapshotCpu(database.name);
  const windowS = (performance.now() - started) / 1000;
  const code = await exited;
  if (code !== 0 || !/failed transactions: 0 /.test(output)) throw new Error(`bench/floor: pgbench failed (${code}):\n${output}`);
  const tps = Number(/tps = ([\d.]+)/.exec(output)?.[1]);
  const cpuUs = backendsCpuUs(before, after, pids);
  if (cpuUs === null) throw new Error('bench/floor: backend CPU is read from /proc (Linux only).');
  // pgbench's rate is steady once its connections are open: the window's transactions are its rate × the window.
  return { tps, databaseCpuUsPerTx: +(cpuUs / (tps * windowS)).toFixed(1) };
}
