import { type ChildProcess, spawn } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, runFw, type RunningFw, startFw } from './support/app.ts';
import { type Hs256Settings, hs256Token } from './support/hs256-token.ts';
import { createTestPostgresDatabase, testDatabaseUrl } from './support/postgres.ts';
import { until } from './support/until.ts';

// What `fw start` tells callers when things go wrong, and what it writes to its log: a 5xx says its code
// and trace id only (the planted secrets stay in the log), a value PostgreSQL cannot take is the
// caller's 400, a body nested 100,000 deep is a 400, caller text cannot forge log lines, and external
// services do not get the caller's token unless their manifest asks for it.

/** A secret planted in every failure below: it must reach the log and never a caller. */
const SECRET = 'pw-s3cr3t-7781';
const connectionString = `postgres://billing:${SECRET}@10.9.8.7:5432/billing`;

// An external service in Python, written the way many adapters are in debug mode: an unexpected
// exception answers 500 with the traceback in the envelope's diagnostics. `echo` returns the headers it got.
const billingService = `import json, sys, traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DATABASE_URL = "${connectionString}"

def refund(args):
    raise ConnectionError("could not connect to " + DATABASE_URL)

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        envelope = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        name = self.path.rsplit("/", 1)[-1]
        try:
            if name == "echo":
                status, body = 200, {"ok": True, "result": {k.lower(): v for k, v in self.headers.items()}}
            else:
                status, body = 200, {"ok": True, "result": refund(envelope["args"])}
        except Exception as exc:
            status, body = 500, {"ok": False, "error": {"code": "internal", "message": str(exc)},
                                 "diagnostics": [{"path": "", "code": "traceback", "message": traceback.format_exc()}]}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(json.dumps({"baseUrl": "http://127.0.0.1:%d" % server.server_address[1]}), flush=True)
server.serve_forever()
`;

// A stdio service that dies with an uncaught exception: Python prints the traceback on stderr, exits 1.
const reportsScript = `import json, sys
json.load(sys.stdin)
raise RuntimeError("cannot open ${connectionString}")
`;

const billingManifest = (baseUrl: string, name: string, extra: Record<string, unknown> = {}) => ({
  fwProtocol: '1.0',
  service: { name, transport: 'http', baseUrl, ...extra },
  entries: [
    { name: 'refund', kind: 'command', policy: 'public', risk: 'write', transaction: 'external-managed' },
    { name: 'echo', kind: 'query', policy: 'user' },
  ],
});
const reportsManifest = {
  fwProtocol: '1.0',
  service: { name: 'reports', transport: 'stdio', command: 'python3', commandArgs: ['reports.py'], timeoutMs: 20_000 },
  entries: [{ name: 'monthly', kind: 'query', policy: 'public' }],
};

async function startPython(dir: string): Promise<{ process: ChildProcess; baseUrl: string }> {
  const child = spawn('python3', ['billing.py'], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`billing.py exited (${code})`)));
  });
  return { process: child, baseUrl: (JSON.parse(line) as { baseUrl: string }).baseUrl };
}

const files: Record<string, string> = {
  'billing.py': billingService,
  'reports.py': reportsScript,
  'src/queries/connect.ts': `import { FwError, query } from 'fwjs';
export default query({
  policy: 'public',
  handler: () => {
    // What a driver throws when it cannot connect (the connection string, password included), passed
    // on the way apps often do: as the diagnostic of a 503.
    const cause = new Error('connect ECONNREFUSED ${connectionString}');
    throw new FwError('unavailable', 'The billing database is down: ' + cause.message, {
      diagnostics: [{ path: 'billing', code: 'connect_failed', message: cause.message }],
      cause,
    });
  },
});
`,
  'src/queries/numbers.ts': `import { query, sql, z } from 'fwjs';
export default query({
  policy: 'public',
  args: { n: z.number(), day: z.string() },
  handler: async (ctx, args) => (await sql\`select \${args.n}::int as n, \${args.day}::date as day\`.execute(ctx.db)).rows,
});
`,
  'src/queries/noteById.ts': `import { query, sql, z } from 'fwjs';
export default query({
  policy: 'public',
  // The id is cast by PostgreSQL, not validated as a uuid first: a bad one is a data error (22P02).
  args: { id: z.string() },
  handler: async (ctx, args) => (await sql\`select \${args.id}::uuid as id\`.execute(ctx.db)).rows,
});
`,
  'src/queries/shout.ts': `import { query, z } from 'fwjs';
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
const tenant = '00000000-0000-4000-8000-0000000000e1';

for (const target of databases) {
  describe(`fw start errors and logs on ${target.name}`, () => {
    let app: Awaited<ReturnType<typeof createTestApp>>;
    let billing: Awaited<ReturnType<typeof startPython>> | undefined;
    let server: RunningFw | undefined;
    let drop: (() => Promise<void>) | undefined;
    let url: string;
    let token: string;
    const env: Record<string, string> & Hs256Settings = {
      FW_AUTH: 'jwt',
      FW_JWT_ISSUER: 'https://issuer.test/',
      FW_JWT_AUDIENCE: 'fw-production-errors',
      FW_JWT_ALGORITHMS: 'HS256',
      FW_JWT_HS_SECRET: 'production-errors-test-secret-of-32-bytes',
      FW_AI: 'mock',
    };

    /** The line of the server's log that names `traceId` (fw logs one line per failure). */
    const loggedLine = (traceId: string) => until(async () => server!.stderr().split('\n').find((line) => line.includes(traceId)), `the failure logged under trace ${traceId}`);

    beforeAll(async () => {
      app = await createTestApp('minimal-web', files);
      await rm(path.join(app.dir, 'web'), { recursive: true, force: true });
      billing = await startPython(app.dir);
      // `billing` keeps the caller's token; `partner` (the same process) opts in to receiving it.
      await writeFile(path.join(app.dir, 'fw.manifest.json'), JSON.stringify(billingManifest(billing.baseUrl, 'billing')));
      await writeFile(path.join(app.dir, 'partner.manifest.json'), JSON.stringify(billingManifest(billing.baseUrl, 'partner', { forwardAuthorization: true })));
      await writeFile(path.join(app.dir, 'reports.manifest.json'), JSON.stringify(reportsManifest));
      for (const file of ['partner.manifest.json', 'reports.manifest.json']) {
        const imported = await runFw(['manifest', 'import', file, '--json'], { cwd: app.dir });
        expect(imported.code, imported.stdout + imported.stderr).toBe(0);
      }
      env.DATABASE_URL = '';
      if (target.url) {
        const database = await createTestPostgresDatabase();
        env.DATABASE_URL = database.url;
        drop = database.drop;
      }
      token = await hs256Token(env, 'ann', tenant);
      const built = await runFw(['build', '--json'], { cwd: app.dir, env });
      expect(built.code, built.stdout + built.stderr).toBe(0);
      server = await startFw(['start', '--port', '0', '--host', '127.0.0.1', '--migrate', '--json'], { cwd: app.dir, env });
      url = server.ready.serverUrl as string;
    }, 180_000);

    afterAll(async () => {
      await server?.stop();
      billing?.process.kill();
      await drop?.();
      await app?.remove();
    });

    /** The body a production 5xx must be: its code, a generic message with the trace id, nothing else. */
    const generic = (code: string, message: string, traceId: string) => ({
      ok: false,
      error: { code, message: `${message} Quote trace id ${traceId} when reporting it.`, diagnostics: [] },
      traceId,
    });

    it('answers an http service’s crash (500, traceback in its diagnostics) with 502 and the trace id only', async () => {
      const failed = await post(url, '/external/billing/commands/refund', { amount: 5 });
      expect(failed.status).toBe(502);
      expect(failed.body).toEqual(generic('bad_gateway', 'A service behind this one failed.', failed.body.traceId));
      expect(JSON.stringify(failed.body)).not.toMatch(new RegExp(`${SECRET}|10\\.9\\.8\\.7|Traceback|127\\.0\\.0\\.1`));
      // The operator's log keeps what the caller must not see — the traceback on the same line, escaped.
      const logged = await loggedLine(failed.body.traceId);
      expect(logged).toContain(`billing.refund: could not connect to ${connectionString}`);
      expect(logged).toContain('Traceback (most recent call last):\\n');
    });

    it('answers a stdio service that dies with a traceback on stderr with 502 and the trace id only', async () => {
      const failed = await post(url, '/external/reports/queries/monthly', {});
      expect(failed.status).toBe(502);
      expect(failed.body).toEqual(generic('bad_gateway', 'A service behind this one failed.', failed.body.traceId));
      expect(JSON.stringify(failed.body)).not.toMatch(new RegExp(`${SECRET}|10\\.9\\.8\\.7|Traceback|reports\\.py`));
      const logged = await loggedLine(failed.body.traceId);
      expect(logged).toContain('external_crashed');
      expect(logged).toContain(`RuntimeError: cannot open ${connectionString}`);
    });

    it('answers a handler’s error with a connection string in its message and diagnostics with its code and the trace id only', async () => {
      const failed = await post(url, '/queries/connect', {});
      expect(failed.status).toBe(503);
      expect(failed.body).toEqual(generic('unavailable', 'Temporarily unavailable; try again.', failed.body.traceId));
      expect(JSON.stringify(failed.body)).not.toMatch(new RegExp(`${SECRET}|10\\.9\\.8\\.7`));
      const logged = await loggedLine(failed.body.traceId);
      expect(logged).toContain(`The billing database is down: connect ECONNREFUSED ${connectionString}`);
      expect(logged).toContain('"code":"connect_failed"');
    });

    it('sends an http service the caller’s verified identity but not the caller’s token, unless its manifest opts in', async () => {
      const bearer = { authorization: `Bearer ${token}` };
      const billingSaw = await post(url, '/external/billing/queries/echo', {}, bearer);
      expect(billingSaw.status, JSON.stringify(billingSaw.body)).toBe(200);
      expect(billingSaw.body.result).toMatchObject({ 'x-fw-user-id': 'ann', 'x-fw-tenant-id': tenant, 'x-fw-trace-id': billingSaw.body.traceId });
      expect(billingSaw.body.result.authorization).toBeUndefined();
      expect(JSON.stringify(billingSaw.body.result)).not.toContain(token);
      const partnerSaw = await post(url, '/external/partner/queries/echo', {}, bearer);
      expect(partnerSaw.status, JSON.stringify(partnerSaw.body)).toBe(200);
      expect(partnerSaw.body.result.authorization).toBe(`Bearer ${token}`);
    });

    it('answers values PostgreSQL cannot take (22P02, 22003, 22008) as the caller’s 400, naming the argument', async () => {
      const bad = await post(url, '/queries/noteById', { id: 'not-a-uuid' });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ code: 'validation_failed', diagnostics: [{ path: 'args.id', code: 'sqlstate_22P02' }] });
      // The path and the SQLSTATE, not the server's text: it quotes the value, and an injection can make that anything it reads.
      expect(bad.body.error.message).toBe('A value does not fit the database.');
      expect(JSON.stringify(bad.body)).not.toContain('invalid input syntax');
      const good = await post(url, '/queries/noteById', { id: '00000000-0000-4000-8000-000000000001' });
      expect(good).toMatchObject({ status: 200, body: { ok: true, result: [{ id: '00000000-0000-4000-8000-000000000001' }] } });
      const huge = await post(url, '/queries/numbers', { n: 99_999_999_999, day: '2024-01-02' });
      expect([huge.status, huge.body.error?.diagnostics]).toEqual([400, [expect.objectContaining({ path: 'args.n', code: 'sqlstate_22003' })]]);
      const day = await post(url, '/queries/numbers', { n: 1, day: '2024-13-45' });
      expect([day.status, day.body.error?.diagnostics]).toEqual([400, [expect.objectContaining({ path: 'args.day', code: 'sqlstate_22008' })]]);
    });

    it('refuses a body nested 100,000 deep with 400 bad_json, and keeps serving', async () => {
      const deep = `{"args":{"id":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`;
      const response = await fetch(`${url}/queries/noteById`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: deep });
      expect(response.status).toBe(400);
      expect(((await response.json()) as any).error).toMatchObject({ code: 'bad_json', diagnostics: [{ path: 'body', code: 'too_deep' }] });
      const live = await fetch(`${url}/live/liveNotes?args=${encodeURIComponent('['.repeat(1000) + ']'.repeat(1000))}`, { headers: { authorization: `Bearer ${token}` } });
      expect(live.status).toBe(400);
      expect((await fetch(`${url}/health`)).status).toBe(200);
    });

    it('writes caller text to the log with its control characters escaped: no forged line, no terminal escape', async () => {
      const forged = 'x\nfw: internal [trace forged] an operator-looking line\u001b[2J\r\n    at forgedFrame (/srv/evil.js:1:1)';
      const failed = await post(url, '/queries/shout', { text: forged });
      expect(failed.status).toBe(500);
      expect(failed.body).toEqual(generic('internal', 'Internal error.', failed.body.traceId));
      const line = await loggedLine(failed.body.traceId);
      expect(line).toContain('cannot shout x\\nfw: internal [trace forged] an operator-looking line\\x1b[2J\\r\\n    at forgedFrame (/srv/evil.js:1:1)');
      const log = server!.stderr();
      expect(log.split('\n').some((l) => l.startsWith('fw: internal [trace forged]'))).toBe(false);
      // Not even a line that passes for a stack frame of the failure.
      expect(log.split('\n').some((l) => /^\s+at forgedFrame/.test(l))).toBe(false);
      expect(log).not.toContain('\u001b');
    });
  });
}
