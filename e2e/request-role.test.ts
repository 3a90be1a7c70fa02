import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, runFw, type RunningFw, startFw } from './support/app.ts';
import { type Hs256Settings, hs256Token } from './support/hs256-token.ts';
import { createTestPostgresDatabase, testDatabaseUrl } from './support/postgres.ts';
import { until } from './support/until.ts';

// An app with an SQL-injection bug, served by `fw start` on PostgreSQL as a deployment would be (the
// owner's DATABASE_URL and nothing else): the attacker's SQL runs inside alice's request transaction
// and must still see nothing of bob's tenant.
const ALICE_TENANT = '00000000-0000-4000-8000-0000000000a1';
const BOB_TENANT = '00000000-0000-4000-8000-0000000000b2';
const SECRET = 'request-role-test-secret-of-at-least-32-characters';

const searchWithInjectionBug = `import { query, sql, z } from 'fwjs';

export default query({
  args: { q: z.string() },
  handler: async (ctx, args) => {
    // The bug under test: caller input pasted into SQL text (here, to remember the last search).
    await sql.raw(\`select set_config('app.last_search', '\${args.q}', true)\`).execute(ctx.db);
    return ctx.db.selectFrom('notes').select('title').orderBy('title').execute();
  },
});
`;

/** Closes the handler's string, adds `expression` to the same statement, and reopens one so the SQL stays valid. */
const inject = (expression: string) => `', true), ${expression}, set_config('app.x', '`;
/** Closes the handler's statement, stacks `attack` after it, and reopens one: several statements in one string. */
const stack = (attack: string) => `', true); ${attack}; select set_config('app.x', '`;

describe.skipIf(!testDatabaseUrl)('an SQL-injection bug in a handler under fw start on PostgreSQL', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let database: Awaited<ReturnType<typeof createTestPostgresDatabase>>;
  let server: RunningFw | undefined;
  let url: string;
  const tokens: Record<'alice' | 'bob', string> = { alice: '', bob: '' };
  const env: Record<string, string> & Hs256Settings = {
    FW_AUTH: 'jwt',
    FW_JWT_ISSUER: 'https://issuer.test/',
    FW_JWT_AUDIENCE: 'fw-request-role',
    FW_JWT_ALGORITHMS: 'HS256',
    FW_JWT_HS_SECRET: SECRET,
    FW_AI: 'mock',
  };
  const search = (q: string) => post(url, '/queries/search', { q }, { authorization: `Bearer ${tokens.alice}` });

  beforeAll(async () => {
    app = await createTestApp('minimal-web', { 'src/queries/search.ts': searchWithInjectionBug });
    await rm(path.join(app.dir, 'web'), { recursive: true, force: true });
    database = await createTestPostgresDatabase();
    env.DATABASE_URL = database.url;
    for (const [name, tenant] of [['alice', ALICE_TENANT], ['bob', BOB_TENANT]] as const) tokens[name] = await hs256Token(env, name, tenant);
    const built = await runFw(['build', '--json'], { cwd: app.dir, env });
    expect(built.code, built.stdout + built.stderr).toBe(0);
    server = await startFw(['start', '--port', '0', '--host', '127.0.0.1', '--migrate', '--json'], { cwd: app.dir, env });
    url = server.ready.serverUrl as string;
    for (const [name, title] of [['alice', 'alice-note'], ['bob', 'bob-secret']] as const) {
      const created = await post(url, '/commands/createNote', { title }, { authorization: `Bearer ${tokens[name]}` });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
    }
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await database?.drop();
    await app?.remove();
  });

  it('answers the honest search with alice’s rows only', async () => {
    const honest = await search('a');
    expect(honest).toMatchObject({ status: 200, body: { ok: true, result: [{ title: 'alice-note' }] } });
  });

  it.each([
    ['reset role', inject("set_config('role', 'none', true)")],
    ['set role to the owner', inject("set_config('role', 'postgres', true)")],
    ['set session authorization', inject("set_config('session_authorization', 'postgres', true)")],
    ['rewrite the tenant setting', inject(`set_config('fw.tenant_id', '${BOB_TENANT}', true)`)],
    ['rewrite every identity setting', inject(`set_config('fw.tenant_id', '${BOB_TENANT}', false), set_config('fw.user_id', 'bob', false), set_config('fw.identity_verified', '', false)`)],
  ])('gains nothing from %s: the database refuses, and no row of bob’s is answered', async (_attack, q) => {
    // The handler's next statement lists notes: were the attack to work, it would answer bob's.
    const attacked = await search(q);
    expect(attacked.status, JSON.stringify(attacked.body)).toBe(403);
    expect(attacked.body).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(JSON.stringify(attacked.body)).not.toContain('bob-secret');
  });

  it.each([
    ['reset role', stack('reset role; select title from notes')],
    ['commit, then write the outbox as the app role', stack(`commit; set role fw_app; insert into _fw_outbox (event, payload) values ('ticket.created', '{}')`)],
  ])('cannot stack statements (%s): the string is refused whole, and nothing of it runs', async (_attack, q) => {
    const attacked = await search(q);
    expect(attacked.status, JSON.stringify(attacked.body)).toBe(500);
    expect(attacked.body).toMatchObject({ ok: false, error: { code: 'internal', message: expect.stringMatching(/^Internal error\. Quote trace id \S+ when reporting it\.$/) } });
    expect(JSON.stringify(attacked.body)).not.toContain('bob-secret');
    // The server log names the entry that sent it.
    await until(async () => /query search sent several SQL statements in one call/.test(server!.stderr()), 'the log line naming the entry');
  });

  it('cannot read other requests through an error message: data errors answer the path and code, not the server’s text', async () => {
    // A classic exfiltration channel: cast what SQL can read to a number and read it back in the error.
    const attacked = await search(inject("(select string_agg(query, ' | ') from pg_stat_activity)::int"));
    expect(attacked.status, JSON.stringify(attacked.body)).toBe(400);
    expect(attacked.body).toMatchObject({ ok: false, error: { code: 'validation_failed', diagnostics: [{ path: 'args', code: 'sqlstate_22P02' }] } });
    expect(JSON.stringify(attacked.body)).not.toMatch(/pg_stat_activity|set_config|select /i);
  });

  it('still serves both tenants correctly after the attacks (no session state left behind)', async () => {
    const bobs = await post(url, '/queries/search', { q: '' }, { authorization: `Bearer ${tokens.bob}` });
    expect(bobs).toMatchObject({ status: 200, body: { ok: true, result: [{ title: 'bob-secret' }] } });
    expect(await search('')).toMatchObject({ status: 200, body: { ok: true, result: [{ title: 'alice-note' }] } });
  });
});
