import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, repoRoot, runFw, type RunningFw, startFw } from './support/app.ts';
import { until } from './support/until.ts';

// The external runtime protocol end to end: real services in another language (Python 3, standard
// library) — one over HTTP, one over stdio — behind a real `fw dev` process.
const tenant = '00000000-0000-4000-8000-000000000001';
const member = { 'x-fw-user-id': 'ann', 'x-fw-tenant-id': tenant, 'x-fw-role': 'member' };
const agentRole = { ...member, 'x-fw-role': 'agent' };
const httpDir = path.join(repoRoot, 'e2e/external/python-http');
const stdioDir = path.join(repoRoot, 'e2e/external/python-stdio');

async function startHttpService(): Promise<{ process: ChildProcess; baseUrl: string }> {
  const child = spawn('python3', [path.join(httpDir, 'service.py'), '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the Python service exited (${code})`)));
  });
  return { process: child, baseUrl: (JSON.parse(line) as { baseUrl: string }).baseUrl };
}

describe('external services behind fw dev', () => {
  let service: Awaited<ReturnType<typeof startHttpService>>;
  let stdioManifest: any;

  /** A fresh app (its own directory and embedded database) with the stdio service in its fw.manifest.json. */
  const newApp = () =>
    createTestApp('minimal-web', {
      'src/policies.ts': "import { definePolicies } from 'fwjs';\nexport default definePolicies({ agent: ({ auth }) => auth.role === 'agent' });\n",
      // Found without importing it.
      'fw.manifest.json': JSON.stringify(stdioManifest, null, 2),
      'grpc.manifest.json': JSON.stringify({ fwProtocol: '1.0', service: { name: 'legacy', transport: 'grpc' }, entries: [{ name: 'lookup', kind: 'query' }] }),
      'src/ai/agents/desk.ts': [
        "import { agent, externalTool } from 'fwjs';",
        "export default agent({ model: 'openai/gpt-4o-mini', tools: { tickets_echo: externalTool('tickets.echo'), tickets_createTicket: externalTool('tickets.createTicket') }, stopWhen: { kind: 'stepCount', maxSteps: 3 } });",
        '',
      ].join('\n'),
    });
  /** Imports the http service from a manifest file (with a 4 s timeout) and the grpc one, as the first test does through every path. */
  const importServices = async (dir: string) => {
    const served = await (await fetch(`${service.baseUrl}/manifest`)).json();
    served.service.timeoutMs = 4_000;
    await writeFile(path.join(dir, 'tickets.manifest.json'), JSON.stringify(served));
    for (const file of ['tickets.manifest.json', 'grpc.manifest.json']) {
      const imported = await runFw(['manifest', 'import', file, '--json'], { cwd: dir });
      expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    }
  };
  /** A test's own app, removed after it. */
  const apps: Array<Awaited<ReturnType<typeof createTestApp>>> = [];
  const ownApp = async ({ withServices }: { withServices: boolean }) => {
    const app = await newApp();
    apps.push(app);
    if (withServices) await importServices(app.dir);
    return app;
  };

  beforeAll(async () => {
    service = await startHttpService();
    stdioManifest = JSON.parse(await readFile(path.join(stdioDir, 'fw.manifest.json'), 'utf8'));
    stdioManifest.service.commandArgs[0] = path.join(stdioDir, 'service.py');
    stdioManifest.service.timeoutMs = 8_000;
    // A stdio entry behind a policy the member role does not pass.
    stdioManifest.entries.push({ name: 'guarded', kind: 'command', policy: 'agent', risk: 'write', transaction: 'external-managed' });
    for (const entry of stdioManifest.entries) if (entry.name === 'record') entry.effects = [{ name: 'note.recorded', tables: ['notes'], liveQueries: ['liveNotes'] }];
  }, 60_000);

  afterEach(async () => {
    for (const app of apps.splice(0)) await app.remove();
  });

  afterAll(async () => {
    service?.process.kill();
  });

  it('imports a service from its GET /manifest, updates it from a file, and leaves a same import unchanged', async () => {
    const app = await ownApp({ withServices: false });
    const fromUrl = await runFw(['manifest', 'import', service.baseUrl, '--json'], { cwd: app.dir });
    expect(fromUrl.code, fromUrl.stdout + fromUrl.stderr).toBe(0);
    expect(JSON.parse(fromUrl.stdout)).toMatchObject({ ok: true, service: 'tickets', status: 'added', importedFrom: `${service.baseUrl}/manifest`, file: '.fw/external-manifests.json' });
    const again = await runFw(['manifest', 'import', service.baseUrl, '--json'], { cwd: app.dir });
    expect(JSON.parse(again.stdout).status).toBe('unchanged');

    // The same service with a short timeout, from a file: an update.
    const served = await (await fetch(`${service.baseUrl}/manifest`)).json();
    served.service.timeoutMs = 4_000;
    await writeFile(path.join(app.dir, 'tickets.manifest.json'), JSON.stringify(served));
    const updated = await runFw(['manifest', 'import', 'tickets.manifest.json', '--json'], { cwd: app.dir });
    expect(JSON.parse(updated.stdout)).toMatchObject({ service: 'tickets', status: 'updated', importedFrom: 'tickets.manifest.json' });
    expect((await runFw(['manifest', 'import', 'grpc.manifest.json', '--json'], { cwd: app.dir })).code).toBe(0);

    const invalid = await runFw(['manifest', 'import', 'src/fw/schema.ts', '--json'], { cwd: app.dir });
    expect(invalid.code).toBe(1);
    expect(JSON.parse(invalid.stdout).kind).toBe('bad_json');
    const registry = JSON.parse(await readFile(path.join(app.dir, '.fw/external-manifests.json'), 'utf8'));
    expect(Object.keys(registry.services)).toEqual(['legacy', 'tickets']);
  });

  it('generates externalServices.json, the external section of api.json, external auto-tools and capabilities', async () => {
    const app = await ownApp({ withServices: true });
    const generated = await runFw(['generate', '--json'], { cwd: app.dir });
    expect(generated.code, generated.stdout + generated.stderr).toBe(0);
    const read = async (file: string) => JSON.parse(await readFile(path.join(app.dir, 'src/fw/_generated', file), 'utf8'));
    const services = (await read('externalServices.json')).services;
    expect(services.map((s: { name: string; transport: string; source: string }) => [s.name, s.transport, s.source])).toEqual([
      ['legacy', 'grpc', '.fw/external-manifests.json'],
      ['scripts', 'stdio', 'fw.manifest.json'],
      ['tickets', 'http', '.fw/external-manifests.json'],
    ]);
    expect(services[1].commandArgs).toEqual([path.join(stdioDir, 'service.py'), '--mode', '', 'last']);
    const api = await read('api.json');
    expect(api.external.find((e: { qualifiedName: string }) => e.qualifiedName === 'tickets.createTicket')).toMatchObject({ kind: 'command', route: 'POST /external/tickets/commands/createTicket', policy: 'user', risk: 'write' });
    const tools = (await read('agentTools.json')).tools;
    expect(tools.find((t: { name: string }) => t.name === 'tickets_createTicket')).toMatchObject({ source: 'external', entry: 'tickets.createTicket', needsApproval: true, readOnly: false, execution: 'external-runtime-endpoint' });
    expect(tools.find((t: { name: string }) => t.name === 'tickets_listTickets')).toMatchObject({ needsApproval: false, readOnly: true, policy: 'agent' });
    const capabilities = await read('capabilityMap.json');
    expect(capabilities.external.find((e: { qualifiedName: string }) => e.qualifiedName === 'scripts.record')).toMatchObject({ transport: 'stdio', effects: ['note.recorded'], invalidates: ['notes'] });
    const contract = await read('agentContract.json');
    expect(contract.policies.find((p: { name: string }) => p.name === 'agent').entries).toContain('tickets.listTickets');
  });

  it('fw run / fw query call the service directly when no fw dev runs, and refuse bad --args JSON', async () => {
    const app = await ownApp({ withServices: true });
    const echoed = await runFw(['query', 'tickets.echo', '--args', '{"q":"direct"}', '--json'], { cwd: app.dir });
    expect(echoed.code, echoed.stdout + echoed.stderr).toBe(0);
    const report = JSON.parse(echoed.stdout);
    expect(report).toMatchObject({ ok: true, service: 'tickets', entry: 'echo', kind: 'query', via: 'direct' });
    expect(report.result.envelope).toEqual({
      args: { q: 'direct' },
      auth: { kind: 'user', userId: 'fw-cli', tenantId: tenant, role: 'member' },
      fw: { service: 'tickets', entry: 'echo', kind: 'query', traceId: report.traceId },
    });
    // A command with effects: recorded in the app's embedded database by this process.
    const created = await runFw(['run', 'tickets.createTicket', '--args', '{"subject":"Direct"}', '--json'], { cwd: app.dir });
    expect(created.code, created.stdout + created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ ok: true, kind: 'command', via: 'direct', result: { subject: 'Direct', tenantId: tenant } });
    const failing = await runFw(['query', 'tickets.failing', '--json'], { cwd: app.dir });
    expect([failing.code, JSON.parse(failing.stdout).kind]).toEqual([1, 'conflict']);

    const bad = await runFw(['run', 'tickets.createTicket', '--args', '{subject:', '--json'], { cwd: app.dir });
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, kind: 'bad_json', message: expect.stringContaining('--args is not JSON') });
    const badQuery = await runFw(['query', 'tickets.echo', '--args', 'nope', '--json'], { cwd: app.dir });
    expect([badQuery.code, JSON.parse(badQuery.stdout).kind]).toEqual([1, 'bad_json']);
  }, 60_000);

  describe('through the runtime', () => {
    // One fw dev for these tests, on an app of their own; no test here changes what another one uses.
    let app: Awaited<ReturnType<typeof createTestApp>>;
    let dev: RunningFw | undefined;
    let serverUrl: string;

    const call = async (route: string, args: unknown, headers: Record<string, string> = member) => {
      const response = await fetch(`${serverUrl}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ args }) });
      return { status: response.status, body: (await response.json()) as any, traceHeader: response.headers.get('x-fw-trace-id') };
    };

    beforeAll(async () => {
      app = await newApp();
      await importServices(app.dir);
      dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir, env: { FW_AI: 'mock' } });
      serverUrl = dev.ready.serverUrl as string;
    }, 60_000);

    afterAll(async () => {
      await dev?.stop();
      await app?.remove();
    });

    it('sends the envelope and forwards identity and trace id over http, but not the caller’s token', async () => {
      const { status, body, traceHeader } = await call('/external/tickets/queries/echo', { q: 'hello' }, { ...member, authorization: 'Bearer abc.def' });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.result.envelope).toEqual({
        args: { q: 'hello' },
        auth: { kind: 'user', userId: 'ann', tenantId: tenant, role: 'member' },
        fw: { service: 'tickets', entry: 'echo', kind: 'query', traceId: body.traceId },
      });
      // The manifest does not set forwardAuthorization: the token (valid against fw) stays here.
      expect(body.result.headers).toEqual({ 'x-fw-trace-id': body.traceId, 'x-fw-auth-kind': 'user', 'x-fw-user-id': 'ann', 'x-fw-tenant-id': tenant, 'x-fw-role': 'member' });
      expect(traceHeader).toBe(body.traceId);
      expect((await call('/external/tickets/queries/raw', {})).body.result).toEqual([1, 2, 3]);
    });

    it('passes service errors back as fw errors with the service’s code', async () => {
      const failing = await call('/external/tickets/queries/failing', {});
      expect(failing.status).toBe(409);
      expect(failing.body.error).toMatchObject({ code: 'conflict', diagnostics: [{ path: 'external', code: 'ticket_closed', message: 'The ticket is closed.' }] });
      const plain = await call('/external/tickets/queries/plainError', {});
      expect(plain.status).toBe(502);
      expect(plain.body.error.message).toContain('database is down');
      const missing = await call('/external/tickets/commands/createTicket', {});
      expect(missing.status).toBe(400);
      expect(missing.body.error.diagnostics).toContainEqual({ path: 'args.subject', message: 'subject is required', code: 'required' });
    });

    it('turns a hanging, oversized, garbled or dropped http answer into distinct errors', async () => {
      const codes = async (name: string) => {
        const { status, body } = await call(`/external/tickets/queries/${name}`, {});
        return [status, body.error.code, body.error.diagnostics[0].code];
      };
      expect(await codes('hang')).toEqual([504, 'gateway_timeout', 'external_timeout']);
      expect(await codes('huge')).toEqual([502, 'bad_gateway', 'external_response_too_large']);
      expect(await codes('garbage')).toEqual([502, 'bad_gateway', 'external_invalid_response']);
      expect(await codes('dropConnection')).toEqual([503, 'unavailable', 'external_unreachable']);
      expect((await fetch(`${serverUrl}/health`)).status).toBe(200);
    }, 30_000);

    it('enforces the entry’s policy before anything leaves fw', async () => {
      // A member may not call listTickets (policy agent); an agent may.
      expect((await call('/external/tickets/queries/listTickets', {})).status).toBe(403);
      expect((await call('/external/tickets/queries/listTickets', {}, agentRole)).status).toBe(200);
      // `guarded` would crash the process (it is no entry of the script): a 403 proves it never started.
      const guarded = await call('/external/scripts/commands/guarded', {});
      expect(guarded.status).toBe(403);
      expect((await call('/external/tickets/queries/echo', {}, {})).status).toBe(401);
    });

    it('runs a stdio service without a shell: envelope on stdin, empty arguments kept, raw and error answers', async () => {
      const echo = await call('/external/scripts/queries/echo', { x: 1 });
      expect(echo.status, JSON.stringify(echo.body)).toBe(200);
      expect(echo.body.result.argv).toEqual(['--mode', '', 'last']);
      expect(echo.body.result.envelope.fw).toEqual({ service: 'scripts', entry: 'echo', kind: 'query', traceId: echo.body.traceId });
      expect((await call('/external/scripts/queries/raw', { a: 2, b: 3 })).body.result).toEqual({ sum: 5 });
      const failing = await call('/external/scripts/queries/failing', {});
      expect(failing.body.error.diagnostics[0].code).toBe('bad_input');
    });

    it('reports a crashing, hanging, oversized or garbled stdio process, and kills what it started', async () => {
      const crash = await call('/external/scripts/queries/crash', {});
      expect([crash.status, crash.body.error.diagnostics[0].code]).toEqual([502, 'external_crashed']);
      expect(crash.body.error.message).toContain('boom');
      const hang = await call('/external/scripts/queries/hang', {});
      expect([hang.status, hang.body.error.diagnostics[0].code]).toEqual([504, 'external_timeout']);
      expect((await call('/external/scripts/queries/huge', {})).body.error.diagnostics[0].code).toBe('external_response_too_large');
      expect((await call('/external/scripts/queries/garbage', {})).body.error.diagnostics[0].code).toBe('external_invalid_response');
      // No service process outlives its call.
      const ps = await new Promise<string>((resolve) => {
        const child = spawn('ps', ['-eo', 'args']);
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.on('close', () => resolve(out));
      });
      expect(ps.split('\n').filter((l) => l.includes(path.join(stdioDir, 'service.py')))).toEqual([]);
    }, 30_000);

    it('says grpc cannot be called by the built-in bridge', async () => {
      const { status, body } = await call('/external/legacy/queries/lookup', {});
      expect([status, body.error.code, body.error.diagnostics[0].code]).toEqual([501, 'not_implemented', 'grpc_not_supported']);
    });

    it('records a command’s effects and invalidates the tables they name', async () => {
      const recorded = await call('/external/scripts/commands/record', { title: 'from python' });
      expect(recorded.status, JSON.stringify(recorded.body)).toBe(200);
      const invalidations = await runFw(['live', 'invalidations', 'list', '--table', 'notes', '--json'], { cwd: app.dir });
      expect(JSON.parse(invalidations.stdout).invalidations.map((r: { traceId: string }) => r.traceId)).toContain(recorded.body.traceId);
    });

    it('fw run / fw query / fw run query call external entries with honest exit codes', async () => {
      const created = await runFw(['run', 'tickets.createTicket', '--args', '{"subject":"From the CLI"}', '--json'], { cwd: app.dir });
      expect(created.code, created.stdout + created.stderr).toBe(0);
      expect(JSON.parse(created.stdout)).toMatchObject({ ok: true, service: 'tickets', entry: 'createTicket', kind: 'command', result: { subject: 'From the CLI', tenantId: tenant }, via: 'runtime' });
      const listed = await runFw(['query', 'tickets.listTickets', '--role', 'agent', '--json'], { cwd: app.dir });
      expect(JSON.parse(listed.stdout).result.map((t: { subject: string }) => t.subject)).toContain('From the CLI');
      const sum = await runFw(['run', 'query', 'scripts.raw', '--args', '{"a":1,"b":2}', '--json'], { cwd: app.dir });
      expect(JSON.parse(sum.stdout).result).toEqual({ sum: 3 });
      const failing = await runFw(['query', 'tickets.failing', '--json'], { cwd: app.dir });
      expect(failing.code).toBe(1);
      expect(JSON.parse(failing.stdout)).toMatchObject({ ok: false, kind: 'conflict' });
      const unknown = await runFw(['run', 'tickets.nope', '--json'], { cwd: app.dir });
      expect(JSON.parse(unknown.stdout)).toMatchObject({ ok: false, kind: 'not_found' });
    });

    it('offers external entries to agents as tools: reads run, commands wait for approval', async () => {
      const run = async (prompt: string) =>
        (await (await fetch(`${serverUrl}/ai/agents/run`, { method: 'POST', headers: { 'content-type': 'application/json', ...member }, body: JSON.stringify({ agent: 'desk', prompt }) })).json()) as any;
      const echoed = await run('call tickets_echo {"q":"via agent"}');
      expect(echoed.result.toolResults[0].output.envelope.args).toEqual({ q: 'via agent' });
      const paused = await run('call tickets_createTicket {"subject":"agent ticket"}');
      expect(paused.result.status).toBe('awaiting-approval');
      expect(paused.result.pendingApprovals[0].toolName).toBe('tickets_createTicket');
    });

    it('follows a manifest edit without a restart', async () => {
      expect((await call('/external/scripts/queries/later', {})).status).toBe(404);
      const file = path.join(app.dir, 'fw.manifest.json');
      const manifest = JSON.parse(await readFile(file, 'utf8'));
      manifest.entries.push({ name: 'later', kind: 'query' });
      await writeFile(file, JSON.stringify(manifest, null, 2));
      // Now fw knows the entry and calls the script, which has no such entry and says so.
      const later = await until(async () => {
        const answer = await call('/external/scripts/queries/later', {});
        return answer.body.error?.diagnostics?.[0]?.code === 'unknown_entry' && answer;
      }, 'fw dev to follow the manifest edit');
      expect([later.status, later.body.error.code]).toEqual([502, 'bad_gateway']);
    });

    it('answers external_unreachable when the service is down', async () => {
      // A service of this test's own, imported under its own name: the shared one stays up.
      const doomed = await startHttpService();
      try {
        const served = await (await fetch(`${doomed.baseUrl}/manifest`)).json();
        served.service.name = 'doomed';
        await writeFile(path.join(app.dir, 'doomed.manifest.json'), JSON.stringify(served));
        const imported = await runFw(['manifest', 'import', 'doomed.manifest.json', '--json'], { cwd: app.dir });
        expect(imported.code, imported.stdout + imported.stderr).toBe(0);
        // Up: fw dev has taken the import in and reaches the service.
        const up = await until(async () => {
          const answer = await call('/external/doomed/queries/raw', {});
          return answer.status === 200 && answer;
        }, 'fw dev to follow the import');
        expect(up.body.result).toEqual([1, 2, 3]);
      } finally {
        doomed.process.kill();
        if (doomed.process.exitCode === null && doomed.process.signalCode === null) await new Promise((r) => doomed.process.once('exit', r));
      }
      const { status, body } = await call('/external/doomed/queries/raw', {});
      expect([status, body.error.diagnostics[0].code]).toEqual([503, 'external_unreachable']);
    });
  });
});
