import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, runFw, type RunningFw, startFw } from './support/app.ts';
import { createTestPostgresDatabase, testDatabaseUrl } from './support/postgres.ts';
import { until } from './support/until.ts';

// What `fw start` tells callers when things go wrong, and what it writes to its log: a 5xx says its code
// and trace id only (the planted secrets stay in the log), a value PostgreSQL cannot take is the
// caller's 400, a body nested 100,000 deep is a 400, and caller text cannot forge log lines.
const files: Record<string, string> = {
  // What fw's external bridge throws when a service crashes: the service's own output in diagnostics.
  'src/queries/leaky.ts': `import { FwError, query } from 'fw';
export default query({
  policy: 'public',
  handler: () => {
    throw new FwError('bad_gateway', 'billing.refund failed: connect ECONNREFUSED postgres://admin:hunter2@10.1.2.3:5432/prod', {
      diagnostics: [{ path: 'external.billing', code: 'service_error', message: 'Traceback (most recent call last): File "/srv/app.py", line 9, DATABASE_URL=postgres://admin:hunter2@10.1.2.3/prod' }],
    });
  },
});
`,
  'src/queries/noteById.ts': `import { query, sql, z } from 'fw';
export default query({
  policy: 'public',
  // The id is cast by PostgreSQL, not validated as a uuid first: a bad one is a data error (22P02).
  args: { id: z.string() },
  handler: async (ctx, args) => (await sql\`select \${args.id}::uuid as id\`.execute(ctx.db)).rows,
});
`,
  'src/queries/shout.ts': `import { query, z } from 'fw';
export default query({
  policy: 'public',
  args: { text: z.string() },
  handler: (_ctx, args) => {
    throw new Error('cannot shout ' + args.text);
  },
});
`,
};

const databases = [{ name: 'PGlite', url: '' }, ...(testDatabaseUrl ? [{ name: 'PostgreSQL', url: 'fresh' }] : [])];

for (const target of databases) {
  describe(`fw start errors and logs on ${target.name}`, () => {
    let app: Awaited<ReturnType<typeof createTestApp>>;
    let server: RunningFw | undefined;
    let drop: (() => Promise<void>) | undefined;
    let url: string;

    beforeAll(async () => {
      app = await createTestApp('minimal-web', files);
      await rm(path.join(app.dir, 'web'), { recursive: true, force: true });
      let databaseUrl = '';
      if (target.url) {
        const database = await createTestPostgresDatabase();
        databaseUrl = database.url;
        drop = database.drop;
      }
      const env = { FW_AUTH: 'none', FW_AI: 'mock', DATABASE_URL: databaseUrl };
      const built = await runFw(['build', '--json'], { cwd: app.dir, env });
      expect(built.code, built.stdout + built.stderr).toBe(0);
      server = await startFw(['start', '--port', '0', '--host', '127.0.0.1', '--migrate', '--json'], { cwd: app.dir, env });
      url = server.ready.serverUrl as string;
    }, 180_000);

    afterAll(async () => {
      await server?.stop();
      await drop?.();
      await app?.remove();
    });

    it('answers a 5xx with its code and trace id only; the details are in the log under that trace id', async () => {
      const failed = await post(url, '/queries/leaky', {});
      expect(failed.status).toBe(502);
      expect(failed.body).toEqual({
        ok: false,
        error: { code: 'bad_gateway', message: `A service behind this one failed. Quote trace id ${failed.body.traceId} when reporting it.`, diagnostics: [] },
        traceId: failed.body.traceId,
      });
      expect(JSON.stringify(failed.body)).not.toMatch(/hunter2|10\.1\.2\.3|postgres:\/\//);
      const logged = await until(async () => server!.stderr().split('\n').find((line) => line.includes(failed.body.traceId)), 'the failure logged under its trace id');
      // The operator's log keeps what the caller must not see, diagnostics included.
      expect(logged).toContain('billing.refund failed');
      expect(logged).toContain('Traceback (most recent call last)');
    });

    it('answers a value PostgreSQL cannot cast (22P02) as the caller’s 400', async () => {
      const bad = await post(url, '/queries/noteById', { id: 'not-a-uuid' });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ code: 'validation_failed', diagnostics: [{ path: 'args', code: 'sqlstate_22P02' }] });
      expect(bad.body.error.message).toContain('invalid input syntax for type uuid');
      const good = await post(url, '/queries/noteById', { id: '00000000-0000-4000-8000-000000000001' });
      expect(good).toMatchObject({ status: 200, body: { ok: true, result: [{ id: '00000000-0000-4000-8000-000000000001' }] } });
    });

    it('refuses a body nested 100,000 deep with 400 bad_json, and keeps serving', async () => {
      const deep = `{"args":{"id":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`;
      const response = await fetch(`${url}/queries/noteById`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: deep });
      expect(response.status).toBe(400);
      expect(((await response.json()) as any).error).toMatchObject({ code: 'bad_json', diagnostics: [{ path: 'body', code: 'too_deep' }] });
      const live = await fetch(`${url}/live/liveNotes?args=${encodeURIComponent('['.repeat(1000) + ']'.repeat(1000))}`);
      expect(live.status).toBe(400);
      expect((await fetch(`${url}/health`)).status).toBe(200);
    });

    it('writes caller text to the log with its control characters escaped: no forged line, no terminal escape', async () => {
      const forged = 'x\nfw: internal [trace forged] an operator-looking line\u001b[2J\r';
      const failed = await post(url, '/queries/shout', { text: forged });
      expect(failed.status).toBe(500);
      const log = await until(async () => {
        const text = server!.stderr();
        return text.includes(failed.body.traceId) && text;
      }, 'the failure logged');
      const line = log.split('\n').find((l) => l.includes(failed.body.traceId))!;
      expect(line).toContain('cannot shout x\\nfw: internal [trace forged] an operator-looking line\\x1b[2J\\r');
      expect(log.split('\n').some((l) => l.startsWith('fw: internal [trace forged]'))).toBe(false);
      expect(log).not.toContain('\u001b');
    });
  });
}
