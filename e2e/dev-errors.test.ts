import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, type RunningFw, startFw } from './support/app.ts';
import { until } from './support/until.ts';

const devAuth = { 'x-fw-user-id': 'user-1', 'x-fw-tenant-id': '00000000-0000-4000-8000-000000000001', 'x-fw-role': 'member' };

// #30.3: a failure in dev names its entry and points at its source line, in the terminal line and in
// the answer's dev diagnostics; #45.3: for an SQL error, the line of the failing statement (the
// driver's stack never reaches it), not the handler's first line.
describe('errors in fw dev say where', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw;
  let url: string;

  beforeAll(async () => {
    app = await createTestApp('minimal-web', {
      // An SQL error in the second statement of the handler: the place is that statement's line.
      'src/commands/misspelt.ts': [
        "import { command } from 'fwjs';",
        '',
        'export default command({',
        '  policy: "user",',
        '  handler: async (ctx) => {',
        '    await ctx.db.selectFrom("notes").selectAll().execute();',
        '    return ctx.db',
        '      .selectFrom("notes")',
        '      .select("stauts" as never)',
        '      .execute();',
        '  },',
        '});',
        '',
      ].join('\n'),
      // The same in raw SQL (sql`…`.execute(ctx.db)).
      'src/commands/rawMisspelt.ts': [
        "import { command, sql } from 'fwjs';",
        '',
        'export default command({',
        '  policy: "user",',
        '  handler: async (ctx) => {',
        '    const limit = 3;',
        '    return (await sql`select stauts from notes limit ${limit}`.execute(ctx.db)).rows;',
        '  },',
        '});',
        '',
      ].join('\n'),
      // A throw in the handler: its stack reaches the line that threw (the module runner maps it to the TypeScript).
      'src/commands/throws.ts': [
        "import { command } from 'fwjs';",
        '',
        'export default command({',
        '  policy: "user",',
        '  handler: async () => {',
        '    const limit: number = 3;',
        '    throw new Error(`over the limit of ${limit}`);',
        '  },',
        '});',
        '',
      ].join('\n'),
    });
    dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir });
    url = dev.ready.serverUrl as string;
  }, 120_000);
  afterAll(async () => {
    await dev?.stop();
    await app?.remove();
  });

  it('an SQL error names the entry and the line of the failing statement', async () => {
    const r = await post(url, '/commands/misspelt', {}, devAuth);
    expect(r.status).toBe(500);
    expect(r.body.error.message).toBe('command misspelt: column "stauts" does not exist');
    expect(r.body.error.diagnostics[0]).toEqual({
      path: 'src/commands/misspelt.ts:10:8',
      code: 'entry_failed',
      message: 'command misspelt failed: column "stauts" does not exist',
    });
    const line = await until(async () => dev.stderr().split('\n').find((l) => l.includes(r.body.traceId)), 'the log line');
    expect(line).toContain(`fw: internal [trace ${r.body.traceId}] command misspelt: column "stauts" does not exist`);
    expect(line).toContain('src/commands/misspelt.ts:10:8');
  });

  it('a raw SQL error names the line of its statement', async () => {
    const r = await post(url, '/commands/rawMisspelt', {}, devAuth);
    expect(r.status).toBe(500);
    expect(r.body.error.diagnostics[0]).toEqual({
      path: 'src/commands/rawMisspelt.ts:7:64',
      code: 'entry_failed',
      message: 'command rawMisspelt failed: column "stauts" does not exist',
    });
  });

  it('a throw names the entry and the line that threw', async () => {
    const r = await post(url, '/commands/throws', {}, devAuth);
    expect(r.status).toBe(500);
    expect(r.body.error.message).toBe('command throws: over the limit of 3');
    expect(r.body.error.diagnostics[0]).toMatchObject({ path: 'src/commands/throws.ts:7:11', code: 'entry_failed' });
  });
});
