import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, runFw } from './support/app.ts';

describe('fw manifest validate', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'fw-manifest-'));
    await writeFile(path.join(dir, 'good.json'), JSON.stringify({
      fwProtocol: '1.0',
      service: { name: 'billing', transport: 'http', baseUrl: 'http://localhost:8080' },
      entries: [{ name: 'createInvoice', kind: 'command', path: '/invoices', risk: 'write' }, { name: 'listInvoices', kind: 'query', path: '/invoices' }],
    }));
    await writeFile(path.join(dir, 'bad.json'), JSON.stringify({
      fwProtocol: '1.0',
      service: { name: 'billing', transport: 'http' },
      entries: [{ name: 'listInvoices', kind: 'query', risk: 'write' }],
    }));
    await writeFile(path.join(dir, 'broken.json'), '{ "fwProtocol": ');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reports a valid manifest', async () => {
    const r = await runFw(['manifest', 'validate', 'good.json', '--json'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ok: true, file: path.join(dir, 'good.json'), service: 'billing', entries: 2, app: 'none', diagnostics: [] });
  });

  it('inside an app, checks the policies and effects the manifest names against it', async () => {
    const app = await createTestApp('minimal-web', { 'src/policies.ts': "import { definePolicies } from 'fwjs';\n\nexport default definePolicies({ admin: ({ auth }) => auth.role === 'admin' });\n" });
    try {
      const write = (name: string, entries: unknown[]) =>
        writeFile(path.join(app.dir, name), JSON.stringify({ fwProtocol: '1.0', service: { name: 'billing', transport: 'http', baseUrl: 'http://localhost:8080' }, entries }));
      await write('ours.json', [{ name: 'refund', kind: 'command', policy: 'admin', effects: [{ name: 'refunded', tables: ['notes'] }] }, { name: 'listInvoices', kind: 'query' }]);
      const ours = await runFw(['manifest', 'validate', 'ours.json', '--json'], { cwd: app.dir });
      expect(ours.code, ours.stderr).toBe(0);
      expect(JSON.parse(ours.stdout)).toMatchObject({ ok: true, app: 'checked', diagnostics: [] });

      await write('theirs.json', [{ name: 'refund', kind: 'command', policy: 'supervisor', effects: [{ name: 'refunded', tables: ['refunds'] }] }]);
      const theirs = await runFw(['manifest', 'validate', 'theirs.json', '--json'], { cwd: app.dir });
      expect(theirs.code).toBe(1);
      const report = JSON.parse(theirs.stdout);
      expect(report).toMatchObject({ ok: false, kind: 'invalid_manifest' });
      expect(report.diagnostics.map((d: { path: string; code: string }) => [d.path, d.code])).toEqual([
        ['entries[0].policy', 'unknown_policy'],
        ['entries', 'unknown_effect_target'],
      ]);
      expect(report.diagnostics[0].hint).toContain('src/policies.ts');
    } finally {
      await app.remove();
    }
  });

  it('fails with diagnostics for an invalid manifest', async () => {
    const r = await runFw(['manifest', 'validate', 'bad.json', '--json'], { cwd: dir });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ ok: false, kind: 'invalid_manifest' });
    expect(report.diagnostics).toEqual(expect.arrayContaining([
      expect.objectContaining({ path: 'service.baseUrl', code: 'missing_base_url' }),
      expect.objectContaining({ path: 'entries[0].risk', code: 'query_not_read_only' }),
    ]));
    const text = await runFw(['manifest', 'validate', 'bad.json'], { cwd: dir });
    expect(text.code).toBe(1);
    expect(text.stderr).toContain('entries[0].risk');
  });

  it('fails on a missing file and on bad JSON', async () => {
    const missing = await runFw(['manifest', 'validate', 'nope.json', '--json'], { cwd: dir });
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({ ok: false, kind: 'not_found' });
    const broken = await runFw(['manifest', 'validate', 'broken.json', '--json'], { cwd: dir });
    expect(broken.code).toBe(1);
    expect(JSON.parse(broken.stdout)).toMatchObject({ ok: false, kind: 'bad_json' });
  });
});

// Each test imports into its own fresh folder, so what one imports is never another's starting point.
describe('fw manifest import', () => {
  let dir: string;
  const registry = () => readFile(path.join(dir, '.fw/external-manifests.json'), 'utf8');
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'fw-import-'));
    const good = { fwProtocol: '1.0', service: { name: 'billing', transport: 'http', baseUrl: 'http://localhost:8080' }, entries: [{ name: 'listInvoices', kind: 'query' }] };
    await writeFile(path.join(dir, 'good.json'), JSON.stringify(good));
    // Valid JSON and valid against the schema, but against the rules: a query that writes.
    await writeFile(path.join(dir, 'rules.json'), JSON.stringify({ ...good, entries: [{ name: 'listInvoices', kind: 'query', risk: 'write', effects: ['x'] }] }));
    await writeFile(path.join(dir, 'warned.json'), JSON.stringify({ ...good, service: { ...good.service, command: 'java' } }));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('writes nothing for a manifest that breaks the rules', async () => {
    const fresh = await runFw(['manifest', 'import', 'rules.json', '--json'], { cwd: dir });
    expect(fresh.code).toBe(1);
    expect(existsSync(path.join(dir, '.fw'))).toBe(false);

    expect((await runFw(['manifest', 'import', 'good.json', '--json'], { cwd: dir })).code).toBe(0);
    const before = await registry();
    const r = await runFw(['manifest', 'import', 'rules.json', '--json'], { cwd: dir });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ ok: false, kind: 'invalid_manifest' });
    expect(report.diagnostics).toEqual([
      expect.objectContaining({ path: 'entries[0].risk', code: 'query_not_read_only', severity: 'error' }),
      expect.objectContaining({ path: 'entries[0].effects', code: 'query_effects', severity: 'error' }),
    ]);
    expect(await registry()).toBe(before);
  });

  it('imports a manifest with warnings and reports them', async () => {
    // billing is imported first, clean, so the warned manifest updates it.
    const first = await runFw(['manifest', 'import', 'good.json', '--json'], { cwd: dir });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ ok: true, service: 'billing', status: 'added', diagnostics: [] });
    const r = await runFw(['manifest', 'import', 'warned.json', '--json'], { cwd: dir });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, service: 'billing', status: 'updated', diagnostics: [{ path: 'service.command', code: 'unused_field', severity: 'warning' }] });
  });
});
