import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { argsSchemaProblem } from './args-schema.ts';
import type { Manifest, ManifestEffect, ManifestEntry } from '../core/external-manifest.ts';

export type { Manifest, ManifestEffect, ManifestEntry };

export interface ManifestDiagnostic {
  /** Dotted path into the manifest, e.g. `service.baseUrl` or `entries[2].risk`; empty for the root. */
  path: string;
  code: string;
  /** An error refuses the manifest; a warning (a field its transport ignores) does not. */
  severity: 'error' | 'warning';
  message: string;
  hint: string;
}

export interface ManifestValidation {
  /** No errors (warnings may remain). */
  ok: boolean;
  /** Present when `ok`. */
  manifest?: Manifest;
  /** Errors and warnings, errors first. */
  diagnostics: ManifestDiagnostic[];
}

/** A diagnostic without its severity: an error unless said otherwise. */
type Finding = Omit<ManifestDiagnostic, 'severity'> & { severity?: ManifestDiagnostic['severity'] };

const withSeverity = (d: Finding): ManifestDiagnostic => ({ path: d.path, code: d.code, severity: d.severity ?? 'error', message: d.message, hint: d.hint });

/** The protocol major versions this fw speaks. */
const supportedMajors = new Set(['1']);

/**
 * Checks a parsed manifest against the JSON Schema and the rules the schema cannot express
 * (read-only queries, transport requirements, well-formed commands, unique entry names).
 * @example const { ok, diagnostics } = validateManifest(JSON.parse(text));
 */
export function validateManifest(value: unknown): ManifestValidation {
  const validate = compiledSchema();
  const found = validate(value) ? [] : schemaDiagnostics(validate.errors ?? []);
  found.push(...ruleDiagnostics(value));
  const diagnostics = found.map(withSeverity);
  const errors = diagnostics.filter((d) => d.severity === 'error');
  const warnings = diagnostics.filter((d) => d.severity === 'warning');
  return errors.length === 0 ? { ok: true, manifest: value as Manifest, diagnostics: warnings } : { ok: false, diagnostics: [...errors, ...warnings] };
}

let compiled: ValidateFunction | undefined;

function compiledSchema(): ValidateFunction {
  if (!compiled) {
    const ajv = new Ajv2020({ allErrors: true, strict: true });
    compiled = ajv.compile(JSON.parse(readSchema()));
  }
  return compiled;
}

// The schema lives at the package root: two levels up from runtime/external/ in a checkout, three
// from dist/runtime/external/ in the built package.
function readSchema(): string {
  const candidates = ['../../schemas/fw-manifest.schema.json', '../../../schemas/fw-manifest.schema.json'].map((p) => new URL(p, import.meta.url));
  for (const url of candidates) {
    try {
      return readFileSync(url, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  throw new Error(`fw could not find schemas/fw-manifest.schema.json (looked at ${candidates.map((u) => u.pathname).join(', ')}); reinstall fw.`);
}

/** `/entries/2/risk` → `entries[2].risk`. */
function dottedPath(pointer: string, child?: string): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  return parts.reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

function schemaDiagnostics(errors: ErrorObject[]): Finding[] {
  // The branches of a oneOf (string effect or object effect) each fail; the oneOf error says it once.
  return errors.filter((e) => !e.schemaPath.includes('/oneOf/')).map(schemaDiagnostic);
}

function schemaDiagnostic(error: ErrorObject): Finding {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const path = dottedPath(error.instancePath, String(params.missingProperty));
      return { path, code: 'missing_field', message: `${path} is required.`, hint: `Add "${String(params.missingProperty)}" to ${dottedPath(error.instancePath) || 'the manifest root'}.` };
    }
    case 'additionalProperties': {
      const path = dottedPath(error.instancePath, String(params.additionalProperty));
      return { path, code: 'unknown_field', message: `${path} is not a manifest field.`, hint: 'Remove it, or check its spelling against schemas/fw-manifest.schema.json.' };
    }
    case 'enum': {
      const path = dottedPath(error.instancePath);
      const allowed = (params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ');
      return { path, code: 'invalid_value', message: `${path} must be one of ${allowed}.`, hint: `Use one of ${allowed}.` };
    }
    case 'type': {
      const path = dottedPath(error.instancePath);
      return { path, code: 'invalid_type', message: `${path || 'The manifest'} must be ${String(params.type)}.`, hint: `Give ${path || 'the manifest'} a value of type ${String(params.type)}.` };
    }
    case 'oneOf': {
      const path = dottedPath(error.instancePath);
      return { path, code: 'invalid_effect', message: `${path} must be an effect name or { name, tables?, liveQueries? }.`, hint: 'Write the effect as a string, or as an object with a "name" and optional "tables"/"liveQueries" string arrays.' };
    }
    case 'minimum':
    case 'maximum': {
      const path = dottedPath(error.instancePath);
      const bound = `${error.keyword === 'minimum' ? 'at least' : 'at most'} ${String(params.limit)}`;
      return { path, code: 'out_of_range', message: `${path} must be ${bound}.`, hint: `Use a whole number ${bound}.` };
    }
    case 'pattern':
    case 'minLength': {
      const path = dottedPath(error.instancePath);
      return { path, code: 'invalid_format', message: `${path} ${error.message ?? 'is malformed'}.`, hint: formatHint(path) };
    }
    default: {
      const path = dottedPath(error.instancePath);
      return { path, code: 'invalid_manifest', message: `${path || 'The manifest'} ${error.message ?? 'is invalid'}.`, hint: 'Compare it with schemas/fw-manifest.schema.json.' };
    }
  }
}

function formatHint(path: string): string {
  if (path === 'fwProtocol') return 'Use a version such as "1.0".';
  if (path === 'service.name') return 'Start with a lowercase letter; then letters, digits, "_" or "-" (e.g. "billing").';
  if (/^entries\[\d+\]\.name$/.test(path)) return 'Use a camelCase identifier starting with a lowercase letter (e.g. "createInvoice").';
  if (path.endsWith('.path') || path.endsWith('.health')) return 'Start the path with "/" (e.g. "/invoices").';
  return 'Give it a non-empty value.';
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// Runs on whatever shape the value has, so one pass reports schema and rule problems together.
function ruleDiagnostics(value: unknown): Finding[] {
  if (!isRecord(value)) return [];
  const out: Finding[] = [];
  if (typeof value.fwProtocol === 'string' && /^\d+(\.\d+)*$/.test(value.fwProtocol)) {
    const major = value.fwProtocol.split('.')[0]!;
    if (!supportedMajors.has(major)) {
      out.push({ path: 'fwProtocol', code: 'unsupported_protocol', message: `fwProtocol ${value.fwProtocol} is not supported; this fw speaks 1.x.`, hint: 'Declare "fwProtocol": "1.0", or upgrade fw.' });
    }
  }
  if (isRecord(value.service)) out.push(...serviceDiagnostics(value.service));
  if (Array.isArray(value.entries)) out.push(...entryDiagnostics(value.entries));
  return out;
}

/** Fields a transport never reads: kept, but said (a warning), since they suggest a mix-up. */
const unusedByTransport: Record<string, { fields: string[]; why: string }> = {
  http: { fields: ['command', 'commandArgs'], why: 'an http service is reached at service.baseUrl; fw starts no process for it' },
  stdio: { fields: ['baseUrl', 'health', 'forwardAuthorization', 'dev'], why: 'a stdio service is a process fw starts per call; it has no address' },
};

function serviceDiagnostics(service: Record<string, unknown>): Finding[] {
  const out: Finding[] = [];
  const { transport, baseUrl, command } = service;
  if (transport === 'http') {
    if (baseUrl === undefined) {
      out.push({ path: 'service.baseUrl', code: 'missing_base_url', message: 'An http service needs service.baseUrl.', hint: 'Add "baseUrl": "http://localhost:8080" (where the service listens).' });
    }
  }
  if (typeof baseUrl === 'string' && baseUrl !== '' && !isServiceUrl(baseUrl, transport === 'grpc' ? ['grpc:', 'grpcs:', 'http:', 'https:'] : ['http:', 'https:'])) {
    out.push(
      transport === 'grpc'
        ? { path: 'service.baseUrl', code: 'invalid_url', message: `service.baseUrl "${baseUrl}" is not an absolute grpc(s) or http(s) URL.`, hint: 'Use an absolute URL such as "grpc://localhost:50051".' }
        : { path: 'service.baseUrl', code: 'invalid_url', message: `service.baseUrl "${baseUrl}" is not an absolute http(s) URL.`, hint: 'Use an absolute URL such as "http://localhost:8080".' },
    );
  }
  if (transport === 'stdio' && command === undefined) {
    out.push({ path: 'service.command', code: 'missing_command', message: 'A stdio service needs service.command.', hint: 'Add "command": the program to start, with its arguments in "commandArgs".' });
  }
  if (typeof command === 'string') {
    // fw never splits or unquotes `command` (there is no shell): it is the program, whole.
    if (!quotesBalanced(command)) {
      out.push({ path: 'service.command', code: 'malformed_command', message: `service.command has unbalanced quotes: ${command}`, hint: 'Put only the program in "command" and each argument, unquoted, in "commandArgs".' });
    } else if (/\s/.test(command)) {
      const [program = command, ...rest] = command.trim().split(/\s+/);
      out.push({
        path: 'service.command',
        code: 'malformed_command',
        message: `service.command "${command}" contains whitespace; fw starts it without a shell and does not split it into arguments.`,
        hint: `Put arguments in commandArgs: "command": ${JSON.stringify(program)}, "commandArgs": ${JSON.stringify([...rest, ...(Array.isArray(service.commandArgs) ? service.commandArgs : [])])}.`,
      });
    }
  }
  const dev = service.dev as { command?: unknown } | undefined;
  if (typeof dev?.command === 'string' && (/\s/.test(dev.command) || !quotesBalanced(dev.command))) {
    out.push({
      path: 'service.dev.command',
      code: 'malformed_command',
      message: `service.dev.command "${dev.command}" contains whitespace or quotes; fw dev starts it without a shell and does not split it into arguments.`,
      hint: 'Put only the program in "command" and each argument, unquoted, in "args".',
    });
  }
  const unused = typeof transport === 'string' ? unusedByTransport[transport] : undefined;
  for (const field of unused?.fields ?? []) {
    if (service[field] === undefined) continue;
    out.push({ path: `service.${field}`, code: 'unused_field', severity: 'warning', message: `service.${field} is ignored: ${unused!.why}.`, hint: `Remove service.${field}, or check service.transport.` });
  }
  return out;
}

function isServiceUrl(text: string, protocols: readonly string[]): boolean {
  try {
    const url = new URL(text);
    return protocols.includes(url.protocol) && url.host !== '';
  } catch {
    return false;
  }
}

/** Shell-style quote balance: backslash escapes outside single quotes. */
function quotesBalanced(command: string): boolean {
  let quote: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const ch = command[i];
    if (ch === '\\' && quote !== "'") i++;
    else if (quote === undefined && (ch === '"' || ch === "'")) quote = ch;
    else if (ch === quote) quote = undefined;
  }
  return quote === undefined;
}

function entryDiagnostics(entries: unknown[]): Finding[] {
  const out: Finding[] = [];
  const seen = new Map<string, number>();
  entries.forEach((entry, i) => {
    if (!isRecord(entry)) return;
    const at = `entries[${i}]`;
    if (typeof entry.name === 'string') {
      const first = seen.get(entry.name);
      if (first === undefined) seen.set(entry.name, i);
      else out.push({ path: `${at}.name`, code: 'duplicate_entry', message: `Entry "${entry.name}" is declared twice (entries[${first}] and ${at}).`, hint: 'Give each entry a unique name; qualified names are <service>.<entry>.' });
    }
    if (entry.kind === 'query') {
      if (entry.risk !== undefined && entry.risk !== 'read') {
        out.push({ path: `${at}.risk`, code: 'query_not_read_only', message: `Query "${String(entry.name)}" declares risk "${String(entry.risk)}"; queries must stay read-only.`, hint: 'Remove "risk" (or set "read"), or make the entry a command.' });
      }
      if (entry.transaction !== undefined && entry.transaction !== 'read-only') {
        out.push({ path: `${at}.transaction`, code: 'query_not_read_only', message: `Query "${String(entry.name)}" declares transaction "${String(entry.transaction)}"; queries must stay read-only.`, hint: 'Set "transaction": "read-only" (or remove it), or make the entry a command.' });
      }
      if (entry.effects !== undefined) {
        out.push({ path: `${at}.effects`, code: 'query_effects', message: `Query "${String(entry.name)}" declares effects; queries are read-only and fw records effects only for commands.`, hint: 'Remove "effects", or make the entry a command.' });
      }
    }
    if (isRecord(entry.argsSchema)) {
      const problem = argsSchemaProblem(entry.argsSchema);
      if (problem) out.push({ path: `${at}.argsSchema`, code: 'invalid_args_schema', message: `argsSchema of "${String(entry.name)}" is not a usable JSON Schema: ${problem}`, hint: 'fw checks args against it before every call; use JSON Schema draft 2020-12 (or set "$schema" to draft-07).' });
    }
    if (isRecord(entry.resultSchema)) {
      const problem = argsSchemaProblem(entry.resultSchema);
      if (problem) out.push({ path: `${at}.resultSchema`, code: 'invalid_result_schema', message: `resultSchema of "${String(entry.name)}" is not a usable JSON Schema: ${problem}`, hint: 'fw checks every answer against it; use JSON Schema draft 2020-12 (or set "$schema" to draft-07).' });
    }
    if (entry.kind === 'command' && entry.risk === 'read') {
      out.push({ path: `${at}.risk`, code: 'command_risk_read', message: `Command "${String(entry.name)}" declares risk "read"; commands declare write, destructive or external.`, hint: 'Use "write", "destructive" or "external"; if it only reads, make it a query.' });
    }
  });
  return out;
}
