import { rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, runFw, type RunningFw, startFw } from './support/app.ts';
import { type Hs256Settings, hs256Token } from './support/hs256-token.ts';
import { createTestPostgresDatabase, testDatabaseUrl } from './support/postgres.ts';

// The minimal-web assistant served by two `fw start` processes on one PostgreSQL, as a deployment runs
// it (JWT auth, no FW_AI_APPROVAL_SECRET): an approval asked on one process is decided on the other,
// once, and only by the user who was asked.
const ALICE_TENANT = '00000000-0000-4000-8000-00000000a11c';
const BOB_TENANT = '00000000-0000-4000-8000-0000000000b0';
const SECRET = 'ai-approvals-test-secret-of-at-least-32-characters';

describe.skipIf(!testDatabaseUrl)('AI approvals under fw start on PostgreSQL', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let database: Awaited<ReturnType<typeof createTestPostgresDatabase>>;
  let client: pg.Client;
  const running: RunningFw[] = [];
  const urls: string[] = [];
  const tokens: Record<'alice' | 'bob', string> = { alice: '', bob: '' };
  const env: Record<string, string> & Hs256Settings = {
    FW_AUTH: 'jwt',
    FW_JWT_ISSUER: 'https://issuer.test/',
    FW_JWT_AUDIENCE: 'fw-ai-approvals',
    FW_JWT_ALGORITHMS: 'HS256',
    FW_JWT_HS_SECRET: SECRET,
    FW_AI: 'mock',
  };
  const as = (who: 'alice' | 'bob') => ({ authorization: `Bearer ${tokens[who]}` });
  const notesTitled = async (title: string) => (await client.query('select tenant_id, author_id from notes where title = $1', [title])).rows;

  beforeAll(async () => {
    app = await createTestApp('minimal-web');
    await rm(path.join(app.dir, 'web'), { recursive: true, force: true });
    database = await createTestPostgresDatabase();
    env.DATABASE_URL = database.url;
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    for (const [name, tenant] of [['alice', ALICE_TENANT], ['bob', BOB_TENANT]] as const) tokens[name] = await hs256Token(env, name, tenant);
    const built = await runFw(['build', '--json'], { cwd: app.dir, env });
    expect(built.code, built.stdout + built.stderr).toBe(0);
    for (const args of [['--migrate'], []]) {
      const child = await startFw(['start', '--port', '0', '--host', '127.0.0.1', '--json', ...args], { cwd: app.dir, env });
      running.push(child);
      urls.push(child.ready.serverUrl as string);
    }
  }, 180_000);

  afterAll(async () => {
    for (const child of running) await child.stop();
    await client?.end();
    await database?.drop();
    await app?.remove();
  });

  it('asked on one process, decided on the other once; a replay and bob’s copy are refused', async () => {
    const [one, two] = urls as [string, string];
    const paused = await fetch(`${one}/ai/agents/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...as('alice') },
      body: JSON.stringify({ agent: 'assistant', prompt: 'call createNote {"title":"approved-once"}' }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body.result.status).toBe('awaiting-approval');
    const resume = JSON.stringify({ agent: 'assistant', messages: paused.body.result.messages, approvals: [{ approvalId: paused.body.result.pendingApprovals[0].approvalId, approved: true }] });
    const send = (url: string, who: 'alice' | 'bob') =>
      fetch(`${url}/ai/agents/run`, { method: 'POST', headers: { 'content-type': 'application/json', ...as(who) }, body: resume }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

    const stolen = await send(two, 'bob');
    expect(stolen.status).toBe(403);
    expect(stolen.body.error.diagnostics[0].code).toBe('approval_wrong_caller');

    const decided = await send(two, 'alice');
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    expect(decided.body.result.toolResults).toMatchObject([{ toolName: 'createNote', output: { title: 'approved-once' } }]);

    for (const url of [one, two]) {
      const replay = await send(url, 'alice');
      expect(replay.status).toBe(403);
      expect(replay.body.error.diagnostics[0].code).toBe('approval_used');
    }
    expect(await notesTitled('approved-once')).toEqual([{ tenant_id: ALICE_TENANT, author_id: 'alice' }]);
  });
});
