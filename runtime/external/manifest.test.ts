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
  expect(result.diagnostics).toContainEqual(expect.objectContaining({ path, code, severity: 'error' }));
  for (const d of result.diagnostics) expect(d.hint.length).toBeGreaterThan(0);
}

/** Accepted, with exactly this warning. */
function expectWarning(value: unknown, path: string, code: string): void {
  const result = validateManifest(value);
  expect(result.ok).toBe(true);
  expect(result.manifest).toBeDefined();
  expect(result.diagnostics).toEqual([expect.objectContaining({ path, code, severity: 'warning' })]);
  expect(result.diagnostics[0]!.hint.length).toBeGreaterThan(0);
}

function expectValid(value: unknown): void {
  expect(validateManifest(value)).toMatchObject({ ok: true, diagnostics: [] });
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

  it('accepts a grpc service at a grpc:// or grpcs:// address', () => {
    for (const baseUrl of ['grpc://localhost:50051', 'grpcs://search.internal:443', 'http://localhost:50051']) {
      expectValid({ fwProtocol: '1.2', service: { name: 'search', transport: 'grpc', baseUrl }, entries: [] });
    }
    expectDiagnostic({ fwProtocol: '1.2', service: { name: 'search', transport: 'grpc', baseUrl: 'localhost:50051' }, entries: [] }, 'service.baseUrl', 'invalid_url');
    // grpc:// is an address for grpc services only.
    expectDiagnostic({ ...httpManifest(), service: { name: 'billing', transport: 'http', baseUrl: 'grpc://localhost:50051' } }, 'service.baseUrl', 'invalid_url');
  });

  it('accepts argsSchema in draft 2020-12 and draft-07, and refuses one that is not a JSON Schema', () => {
    const withArgsSchema = (argsSchema: unknown) => ({ ...stdioManifest(), entries: [{ name: 'summarize', kind: 'query', argsSchema }] });
    expectValid(withArgsSchema({ type: 'object', required: ['text'], properties: { text: { type: 'string', maxLength: 10_000 }, at: { type: 'string', format: 'date-time' } } }));
    expectValid(withArgsSchema({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', definitions: { t: { type: 'string' } }, properties: { text: { $ref: '#/definitions/t' } } }));
    expectDiagnostic(withArgsSchema({ type: 'object', properties: { text: { type: 'text' } } }), 'entries[0].argsSchema', 'invalid_args_schema');
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
    it('missing fwProtocol and entries', () => {
      const m: Any = httpManifest();
      delete m.fwProtocol;
      expectDiagnostic(m, 'fwProtocol', 'missing_field');
      const n: Any = httpManifest();
      delete n.entries;
      expectDiagnostic(n, 'entries', 'missing_field');
    });
    it('fwProtocol that is not a dotted version', () => {
      for (const version of ['v1', '1.x', '', '1.0-beta']) {
        const m: Any = httpManifest();
        m.fwProtocol = version;
        expectDiagnostic(m, 'fwProtocol', 'invalid_format');
      }
    });
    it('service.name not matching its pattern', () => {
      for (const name of ['Billing', '1billing', 'bill.ing', 'bill ing']) {
        const m: Any = httpManifest();
        m.service.name = name;
        expectDiagnostic(m, 'service.name', 'invalid_format');
      }
    });
    it('entry name not matching its pattern', () => {
      const m: Any = httpManifest();
      m.entries[0].name = 'create-invoice';
      expectDiagnostic(m, 'entries[0].name', 'invalid_format');
    });
    it('path and health without a leading "/"', () => {
      const m: Any = httpManifest();
      m.entries[1].path = 'invoices/open';
      expectDiagnostic(m, 'entries[1].path', 'invalid_format');
      const n: Any = httpManifest();
      n.service.health = 'health';
      expectDiagnostic(n, 'service.health', 'invalid_format');
    });
    it('bad risk and transaction values', () => {
      const m: Any = httpManifest();
      m.entries[0].risk = 'dangerous';
      expectDiagnostic(m, 'entries[0].risk', 'invalid_value');
      const n: Any = httpManifest();
      n.entries[0].transaction = 'serializable';
      expectDiagnostic(n, 'entries[0].transaction', 'invalid_value');
    });
    it('needsApproval that is not a boolean', () => {
      const m: Any = httpManifest();
      m.entries[0].needsApproval = 'yes';
      expectDiagnostic(m, 'entries[0].needsApproval', 'invalid_type');
    });
    it('forwardAuthorization that is not a boolean', () => {
      const m: Any = httpManifest();
      m.service.forwardAuthorization = 'yes';
      expectDiagnostic(m, 'service.forwardAuthorization', 'invalid_type');
      const opted: Any = httpManifest();
      opted.service.forwardAuthorization = true;
      expectValid(opted);
    });
    it('commandArgs as a string, or with non-string items', () => {
      const m: Any = stdioManifest();
      m.service.commandArgs = '-m tools';
      expectDiagnostic(m, 'service.commandArgs', 'invalid_type');
      const n: Any = stdioManifest();
      n.service.commandArgs = ['-m', 3, null];
      expectDiagnostic(n, 'service.commandArgs[1]', 'invalid_type');
      expectDiagnostic(n, 'service.commandArgs[2]', 'invalid_type');
    });
    it('timeoutMs and maxResponseBytes out of bounds or not integers', () => {
      const cases: Array<[string, unknown, string]> = [
        ['timeoutMs', 0, 'out_of_range'],
        ['timeoutMs', 600_001, 'out_of_range'],
        ['timeoutMs', 1.5, 'invalid_type'],
        ['maxResponseBytes', 0, 'out_of_range'],
        ['maxResponseBytes', 104_857_601, 'out_of_range'],
        ['maxResponseBytes', '1MB', 'invalid_type'],
      ];
      for (const [field, value, code] of cases) {
        const m: Any = httpManifest();
        m.service[field] = value;
        expectDiagnostic(m, `service.${field}`, code);
      }
      const edges: Any = httpManifest();
      Object.assign(edges.service, { timeoutMs: 600_000, maxResponseBytes: 1 });
      expectValid(edges);
    });
  });

  describe('valid variants', () => {
    it('commands with risk destructive and external', () => {
      const m: Any = httpManifest();
      m.entries[0].risk = 'destructive';
      m.entries.push({ name: 'notifyCustomer', kind: 'command', risk: 'external' });
      expectValid(m);
    });
    it('a query with risk and transaction omitted', () => {
      const m: Any = httpManifest();
      delete m.entries[1].risk;
      delete m.entries[1].transaction;
      expectValid(m);
    });
    it('a command with commandArgs that contain spaces (each item is one argument)', () => {
      const m: Any = stdioManifest();
      m.service.commandArgs = ['-c', 'print("a b")', ''];
      expectValid(m);
    });
  });

  describe('fields the transport ignores (warnings)', () => {
    it('command or commandArgs on an http service', () => {
      const m: Any = httpManifest();
      m.service.command = 'java';
      expectWarning(m, 'service.command', 'unused_field');
      const n: Any = httpManifest();
      n.service.commandArgs = ['-jar', 'billing.jar'];
      expectWarning(n, 'service.commandArgs', 'unused_field');
    });
    it('baseUrl or forwardAuthorization on a stdio service', () => {
      const m: Any = stdioManifest();
      m.service.baseUrl = 'http://localhost:8080';
      expectWarning(m, 'service.baseUrl', 'unused_field');
      const n: Any = stdioManifest();
      n.service.forwardAuthorization = true;
      expectWarning(n, 'service.forwardAuthorization', 'unused_field');
    });
    it('warnings follow the errors of an invalid manifest', () => {
      const m: Any = stdioManifest();
      m.service.baseUrl = 'http://localhost:8080';
      delete m.service.command;
      const result = validateManifest(m);
      expect(result.ok).toBe(false);
      expect(result.diagnostics.map((d) => [d.path, d.severity])).toEqual([
        ['service.command', 'error'],
        ['service.baseUrl', 'warning'],
      ]);
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
    it('command string with whitespace even when commandArgs is present', () => {
      const m: Any = stdioManifest();
      m.service.command = 'python3 -u';
      const result = validateManifest(m);
      expect(result.ok).toBe(false);
      expect(result.diagnostics).toEqual([expect.objectContaining({ path: 'service.command', code: 'malformed_command', severity: 'error' })]);
      expect(result.diagnostics[0]!.hint).toBe('Put arguments in commandArgs: "command": "python3", "commandArgs": ["-u","-m","tools","","--flag"].');
    });
    it('query with effects', () => {
      const m: Any = httpManifest();
      m.entries[1].effects = ['invoice.viewed'];
      expectDiagnostic(m, 'entries[1].effects', 'query_effects');
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
