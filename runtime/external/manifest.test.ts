import { describe, expect, it } from 'vitest';
import { validateManifest } from './manifest.ts';

const httpManifest = () => ({
  fwProtocol: '1.0',
  language: 'java',
  framework: 'spring',
  service: { name: 'billing', transport: 'http', baseUrl: 'http://localhost:8080', health: '/health' },
  entries: [
    { name: 'createInvoice', kind: 'command', path: '/invoices', policy: 'user', transaction: 'external-managed', risk: 'write', needsApproval: true, effects: ['invoiceCreated', { name: 'ledger', tables: ['invoices'], liveQueries: ['openInvoices'] }], tenantScoped: true, description: 'Creates an invoice', argsSchema: { type: 'object' } },
    { name: 'openInvoices', kind: 'query', path: '/invoices/open', transaction: 'read-only', risk: 'read' },
  ],
});

const stdioManifest = () => ({
  fwProtocol: '1.0',
  service: { name: 'py-tools', transport: 'stdio', command: 'python3', commandArgs: ['-m', 'tools', '', '--flag'] },
  entries: [{ name: 'summarize', kind: 'query' }],
});

type Any = any;
function expectDiagnostic(value: unknown, path: string, code: string): void {
  const result = validateManifest(value);
  expect(result.ok).toBe(false);
  expect(result.manifest).toBeUndefined();
  expect(result.diagnostics).toContainEqual(expect.objectContaining({ path, code }));
  for (const d of result.diagnostics) expect(d.hint.length).toBeGreaterThan(0);
}

describe('validateManifest', () => {
  it('accepts an http manifest with both effect forms', () => {
    const result = validateManifest(httpManifest());
    expect(result).toEqual({ ok: true, manifest: httpManifest(), diagnostics: [] });
  });

  it('accepts a stdio manifest and preserves empty commandArgs', () => {
    const result = validateManifest(stdioManifest());
    expect(result.ok).toBe(true);
    expect(result.manifest?.service.commandArgs).toEqual(['-m', 'tools', '', '--flag']);
  });

  it('accepts grpc without baseUrl or command', () => {
    const result = validateManifest({ fwProtocol: '1.2', service: { name: 'search', transport: 'grpc' }, entries: [] });
    expect(result).toMatchObject({ ok: true, diagnostics: [] });
  });

  describe('schema errors', () => {
    it('wrong transport', () => {
      const m: Any = httpManifest();
      m.service.transport = 'ftp';
      expectDiagnostic(m, 'service.transport', 'invalid_value');
    });
    it('missing service name', () => {
      const m: Any = httpManifest();
      delete m.service.name;
      expectDiagnostic(m, 'service.name', 'missing_field');
    });
    it('bad entry kind', () => {
      const m: Any = httpManifest();
      m.entries[1].kind = 'mutation';
      expectDiagnostic(m, 'entries[1].kind', 'invalid_value');
    });
    it('extra property', () => {
      const m: Any = httpManifest();
      m.entries[0].retries = 3;
      expectDiagnostic(m, 'entries[0].retries', 'unknown_field');
    });
    it('malformed effect object', () => {
      const m: Any = httpManifest();
      m.entries[0].effects = [{ tables: ['x'] }];
      expectDiagnostic(m, 'entries[0].effects[0]', 'invalid_effect');
    });
    it('a non-object manifest', () => {
      expectDiagnostic([], '', 'invalid_type');
    });
  });

  describe('cross-field rules', () => {
    it('query with risk write', () => {
      const m: Any = httpManifest();
      m.entries[1].risk = 'write';
      expectDiagnostic(m, 'entries[1].risk', 'query_not_read_only');
    });
    it('query with transaction external-managed', () => {
      const m: Any = httpManifest();
      m.entries[1].transaction = 'external-managed';
      expectDiagnostic(m, 'entries[1].transaction', 'query_not_read_only');
    });
    it('command with risk read', () => {
      const m: Any = httpManifest();
      m.entries[0].risk = 'read';
      expectDiagnostic(m, 'entries[0].risk', 'command_risk_read');
    });
    it('http without baseUrl', () => {
      const m: Any = httpManifest();
      delete m.service.baseUrl;
      expectDiagnostic(m, 'service.baseUrl', 'missing_base_url');
    });
    it('http with a relative baseUrl', () => {
      const m: Any = httpManifest();
      m.service.baseUrl = 'localhost:8080/api';
      expectDiagnostic(m, 'service.baseUrl', 'invalid_url');
    });
    it('stdio without command', () => {
      const m: Any = stdioManifest();
      delete m.service.command;
      expectDiagnostic(m, 'service.command', 'missing_command');
    });
    it('command string with arguments but no commandArgs', () => {
      const m: Any = stdioManifest();
      m.service.command = 'python3 -m tools';
      delete m.service.commandArgs;
      expectDiagnostic(m, 'service.command', 'malformed_command');
    });
    it('command string with unbalanced quotes', () => {
      const m: Any = stdioManifest();
      m.service.command = '"/opt/my tools/run';
      expectDiagnostic(m, 'service.command', 'malformed_command');
    });
    it('duplicate entry names', () => {
      const m: Any = httpManifest();
      m.entries.push({ name: 'createInvoice', kind: 'command', risk: 'write' });
      expectDiagnostic(m, 'entries[2].name', 'duplicate_entry');
    });
    it('protocol 2.0', () => {
      const m: Any = httpManifest();
      m.fwProtocol = '2.0';
      expectDiagnostic(m, 'fwProtocol', 'unsupported_protocol');
    });
  });
});
