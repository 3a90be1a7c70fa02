import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFw } from './support/app.ts';

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
    expect(JSON.parse(r.stdout)).toEqual({ ok: true, file: path.join(dir, 'good.json'), service: 'billing', entries: 2, diagnostics: [] });
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
