/**
 * MCP through real processes: the official SDK client against `fw dev` (dev headers) and `fw start`
 * with `FW_MCP=1` (bearer JWTs, approvals on the admin channel), and the official conformance suite
 * (`@modelcontextprotocol/conformance server`, a devDependency) against `fw dev`.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath, createTestApp, runFw, type RunningFw, startFw } from './support/app.ts';
import { launchChromium } from './support/browser.ts';
import { hs256Token } from './support/hs256-token.ts';

const devFiles = {
  // A command that asks a person first even in dev (tool.needsApproval): decided in the dashboard.
  'src/commands/pinNote.ts': `import { command, z } from 'fwjs';
export default command({
  description: 'Pins a note.',
  policy: 'user',
  tool: { needsApproval: true },
  args: { title: z.string().min(1) },
  handler: (ctx, args) => ctx.db.insertInto('notes').values({ title: args.title, body: null, author_id: ctx.auth.userId! }).returning(['title', 'tenant_id']).executeTakeFirstOrThrow(),
});
`,
  // A query that fails as the conformance suite's tools-call-error scenario wants (which calls it
  // `test_error_handling`: no fw entry can have that name, entries are named by camelCase files).
  'src/queries/testErrorHandling.ts': `import { FwError, query } from 'fwjs';
export default query({
  description: 'Fails on purpose.',
  handler: () => { throw new FwError('conflict', 'This tool intentionally returns an error for testing'); },
});
`,
};

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: any };

async function connect(url: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'fw-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
}
const call = (client: Client, name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args }) as Promise<ToolResult>;
const devHeaders = (user: string, tenant: string) => ({ 'x-fw-user-id': user, 'x-fw-tenant-id': tenant });

describe('MCP on fw dev', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw;
  let url: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    app = await createTestApp('minimal-web', devFiles);
    await rm(path.join(app.dir, 'web'), { recursive: true });
    dev = await startFw(['dev', '--api-only', '--port', '0', '--no-worker', '--json'], { cwd: app.dir, env: { DATABASE_URL: '' }, timeoutMs: 90_000 });
    url = String(dev.ready.apiUrl ?? dev.ready.url ?? dev.ready.serverUrl);
  }, 120_000);
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await dev?.stop();
    await app?.remove();
  });

  it("lists the app's entries as tools and runs them as the caller, each tenant seeing its own rows", async () => {
    const [tenantA, tenantB] = [randomUUID(), randomUUID()];
    const alice = await connect(url, devHeaders('alice', tenantA));
    const bob = await connect(url, devHeaders('bob', tenantB));
    clients.push(alice, bob);
    const { tools } = await alice.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['createNote', 'deleteNote', 'findNotes', 'listNotes', 'liveNotes', 'pinNote', 'testErrorHandling', 'updateNote']);
    expect(tools.find((tool) => tool.name === 'createNote')!.inputSchema.required).toEqual(['title']);

    const created = await call(alice, 'createNote', { title: 'from an agent' });
    expect(created.structuredContent).toMatchObject({ title: 'from an agent', author_id: 'alice', tenant_id: tenantA });
    expect(JSON.parse((await call(alice, 'listNotes')).content[0]!.text!).map((note: { title: string }) => note.title)).toEqual(['from an agent']);
    expect(JSON.parse((await call(bob, 'listNotes')).content[0]!.text!)).toEqual([]);
    const failed = await call(bob, 'testErrorHandling');
    expect(failed.isError).toBe(true);
    expect(failed.structuredContent.error).toEqual({ code: 'conflict', message: 'This tool intentionally returns an error for testing', diagnostics: [] });
    expect(failed.content).toEqual([{ type: 'text', text: expect.stringMatching(/^conflict: This tool intentionally returns an error for testing \(trace id [0-9a-f]{32}\)$/) }]);
  });

  it('shows the audit and the calls waiting for approval in the dashboard, where a person approves one, and in fw mcp', async () => {
    const tenant = randomUUID();
    const agent = await connect(url, devHeaders('carol', tenant));
    clients.push(agent);
    const asked = await call(agent, 'pinNote', { title: 'pinned by an agent' });
    expect(asked.structuredContent.error).toMatchObject({ code: 'forbidden', reason: 'approval_required' });
    const { approvalId } = asked.structuredContent.error;

    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`${dev.ready.dashboardUrl}#/mcp`);
      const waiting = page.getByRole('region', { name: 'MCP approvals waiting' });
      const row = waiting.locator(`tr[data-key="${approvalId}"]`);
      await expect.poll(() => row.innerText(), { timeout: 45_000 }).toContain('pinNote');
      expect(await row.innerText()).toContain('{"title":"pinned by an agent"}');
      expect(await row.innerText()).toContain('carol');
      await page.getByRole('button', { name: `Approve pinNote ${approvalId.slice(0, 8)}` }).click();
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Approved' }).innerText(), { timeout: 45_000 }).toBe(`Approved pinNote for carol (${approvalId.slice(0, 8)}).`);

      const pinned = await call(agent, 'pinNote', { title: 'pinned by an agent' });
      expect(pinned.structuredContent).toMatchObject({ title: 'pinned by an agent', tenant_id: tenant });
      // The audit, newest first: the call that ran with the approval, then the one that asked for it.
      const audit = page.getByRole('region', { name: 'MCP audit' });
      const carol = audit.locator('tbody tr').filter({ hasText: 'pinNote' }).filter({ hasText: 'carol' });
      await expect.poll(() => carol.allInnerTexts(), { timeout: 45_000 }).toEqual([expect.stringMatching(/carol.*pinNote\s+command\s+ok/s), expect.stringMatching(/carol.*pinNote\s+command\s+approval required/s)]);
    } finally {
      await browser.close();
    }

    // The CLI reads the same through the running runtime (its admin routes; dev mode opens them).
    const listed = await runFw(['mcp', 'audit', '--json', '--limit', '50'], { cwd: app.dir });
    expect(listed.code, listed.stderr).toBe(0);
    const { calls } = JSON.parse(listed.stdout) as { calls: Array<{ userId: string; tenantId: string; entry: string; outcome: string; approvalId: string | null; traceId: string }> };
    expect(calls.filter((row) => row.tenantId === tenant).map((row) => [row.userId, row.entry, row.outcome, row.approvalId])).toEqual([
      ['carol', 'pinNote', 'ok', approvalId],
      ['carol', 'pinNote', 'approval_required', approvalId],
    ]);
    const pending = await runFw(['mcp', 'approvals', '--json'], { cwd: app.dir });
    expect((JSON.parse(pending.stdout) as { approvals: Array<{ approvalId: string }> }).approvals.map((approval) => approval.approvalId)).not.toContain(approvalId);
  }, 120_000);

  it('fw mcp serve: fw for coding agents on stdio — the app model, diagnostics, migrations, an entry run as an identity, read-only', async () => {
    const agent = new Client({ name: 'fw-e2e-coding-agent', version: '1.0.0' });
    await agent.connect(new StdioClientTransport({ command: process.execPath, args: [cliPath, 'mcp', 'serve', '--root', app.dir], cwd: app.dir, stderr: 'pipe' }));
    clients.push(agent);
    const { tools } = await agent.listTools();
    expect(tools.map((tool) => [tool.name, tool.annotations?.readOnlyHint])).toEqual([
      ['fw_inspect', true],
      ['fw_check', true],
      ['fw_db_status', true],
      ['fw_run_entry', true],
    ]);
    const model = await call(agent, 'fw_inspect', { target: 'client' });
    expect(model.structuredContent.entries.map((entry: { name: string; kind: string }) => [entry.name, entry.kind])).toEqual(expect.arrayContaining([['createNote', 'command'], ['listNotes', 'query'], ['liveNotes', 'liveQuery']]));
    const status = await call(agent, 'fw_db_status');
    expect(status.isError, status.content[0]!.text).toBeFalsy();
    expect(status.structuredContent.pending).toEqual([]);
    const checked = await call(agent, 'fw_check', { typecheck: false });
    expect(checked.structuredContent.checks.map((check: { name: string }) => check.name)).toContain('generated');

    const tenant = randomUUID();
    const user = await connect(url, devHeaders('dora', tenant));
    clients.push(user);
    expect((await call(user, 'createNote', { title: 'seen by the coding agent' })).isError).toBeFalsy();
    const read = await call(agent, 'fw_run_entry', { name: 'listNotes', userId: 'dora', tenantId: tenant });
    expect(read.structuredContent).toMatchObject({ ok: true, result: [{ title: 'seen by the coding agent', tenant_id: tenant }] });
    const write = await call(agent, 'fw_run_entry', { name: 'createNote', args: { title: 'no' }, userId: 'dora', tenantId: tenant });
    expect([write.isError, write.structuredContent.error.code, write.structuredContent.error.reason]).toEqual([true, 'forbidden', 'writes_not_allowed']);
  }, 120_000);

  // The suite connects without credentials; a proxy adds a dev identity and passes everything else
  // (Host and Origin included) as sent, as a client configured with headers would.
  const conformance = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js');
  it('passes the conformance scenarios that apply to an app server', async () => {
    const target = new URL(url);
    const tenant = randomUUID();
    const proxy: Server = createServer((req, res) => {
      const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, ...devHeaders('conformance', tenant) } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxied = `http://localhost:${(proxy.address() as AddressInfo).port}/mcp`;
    // The others need the suite's own fixture tools, prompts or resources (docs/mcp.md#conformance).
    const applies = ['server-initialize', 'ping', 'logging-set-level', 'tools-list', 'dns-rebinding-protection', 'server-sse-multiple-streams', 'server-sse-polling'];
    const outcomes: Record<string, { code: number | null; output: string }> = {};
    try {
      for (const scenario of applies) {
        outcomes[scenario] = await new Promise((resolve, reject) => {
          const child = spawn(process.execPath, [conformance, 'server', '--url', proxied, '--scenario', scenario], { cwd: app.dir });
          let output = '';
          child.stdout.on('data', (d) => (output += d));
          child.stderr.on('data', (d) => (output += d));
          child.on('error', reject);
          child.on('exit', (code) => resolve({ code, output }));
        });
      }
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
    const failed = Object.entries(outcomes).filter(([, outcome]) => outcome.code !== 0);
    expect(failed.map(([scenario, outcome]) => `${scenario}: ${outcome.output}`)).toEqual([]);
  }, 180_000);
});

describe('MCP on fw start (FW_MCP=1, bearer JWTs)', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let server: RunningFw | undefined;
  const settings = { FW_JWT_ISSUER: 'https://issuer.test/', FW_JWT_AUDIENCE: 'fw-mcp', FW_JWT_HS_SECRET: 'mcp-e2e-test-secret-of-32-bytes!!!!' };
  const adminToken = `admin-${randomUUID()}`;
  const env = { FW_AUTH: 'jwt', FW_JWT_ALGORITHMS: 'HS256', ...settings, DATABASE_URL: '', NODE_ENV: 'production', FW_MCP: '1', FW_ADMIN_TOKEN: adminToken };
  const clients: Client[] = [];

  beforeAll(async () => {
    app = await createTestApp('minimal-web');
    await rm(path.join(app.dir, 'web'), { recursive: true });
    const built = await runFw(['build', '--json'], { cwd: app.dir, env });
    expect(built.code, built.stdout + built.stderr).toBe(0);
    server = await startFw(['start', '--port', '0', '--host', '127.0.0.1', '--migrate', '--json'], { cwd: app.dir, env });
  }, 180_000);
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await server?.stop();
    await app?.remove();
  });

  it('asks a human before a command runs, runs it once approved on the admin channel, and keeps tenants apart', async () => {
    const url = server!.ready.serverUrl as string;
    const [tenantA, tenantB] = [randomUUID(), randomUUID()];
    // docs/mcp.md's client: the SDK's Streamable HTTP transport with the bearer token in its headers (connect above), then callTool (listTools: the fw dev case above).
    const alice = await connect(url, { authorization: `Bearer ${await hs256Token(settings, 'alice', tenantA)}` });
    const mallory = await connect(url, { authorization: `Bearer ${await hs256Token(settings, 'mallory', tenantB)}` });
    clients.push(alice, mallory);

    const asked = await call(alice, 'createNote', { title: 'needs a yes' });
    expect(asked.structuredContent.error).toMatchObject({ code: 'forbidden', reason: 'approval_required' });
    const { approvalId } = asked.structuredContent.error;
    // The agent's own token does not open the admin channel (it asks for the admin token).
    const bySelf = await fetch(`${url}/_fw/mcp/approvals/${approvalId}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${await hs256Token(settings, 'alice', tenantA)}` }, body: '{"approved":true}' });
    expect(bySelf.status).toBe(401);
    const byOperator = await fetch(`${url}/_fw/mcp/approvals/${approvalId}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-fw-admin-token': adminToken }, body: '{"approved":true}' });
    expect(byOperator.status).toBe(200);

    const created = await call(alice, 'createNote', { title: 'needs a yes' });
    expect(created.structuredContent).toMatchObject({ title: 'needs a yes', tenant_id: tenantA });
    expect(JSON.parse((await call(mallory, 'listNotes')).content[0]!.text!)).toEqual([]);

    // fw mcp audit asks the same route of a runtime outside dev with the admin token (docs/mcp.md#audit).
    const listed = await runFw(['mcp', 'audit', '--json', '--limit', '10', '--url', url, '--admin-token', adminToken], { cwd: app.dir });
    expect(listed.code, listed.stderr).toBe(0);
    const audit = JSON.parse(listed.stdout);
    expect(audit.calls.filter((row: { tenantId: string }) => row.tenantId === tenantA).map((row: { userId: string; entry: string; outcome: string; approvalId: string | null }) => [row.userId, row.entry, row.outcome, row.approvalId])).toEqual([
      ['alice', 'createNote', 'ok', approvalId],
      ['alice', 'createNote', 'approval_required', approvalId],
    ]);
  });
});
