import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_APPROVAL_TTL_MS } from '../ai/approval-ledger.ts';
import { DEFAULT_MAX_TOKEN_AGE_SECONDS } from '../auth/jwt.ts';
import { FwFailure } from '../core/failure.ts';
import { describeConfig, renderConfigDocs } from './describe-config.ts';
import { resolveConfig } from './resolve-config.ts';
import { VARIABLES } from './variables.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

describe('resolveConfig', () => {
  it('gives each variable its typed value, or its default when unset or empty', () => {
    const config = resolveConfig({ FW_MAX_CONNECTIONS: ' 64 ', FW_TRACE_TENANT: 'yes', FW_AI_MODEL: '', FW_CSP: '', PORT: '0' });
    expect(config.get('FW_MAX_CONNECTIONS')).toBe(64);
    expect(config.get('FW_REQUEST_TIMEOUT_MS')).toBe(30_000);
    expect(config.get('FW_TRACE_TENANT')).toBe(true);
    expect(config.get('FW_AI_RECORD_CONTENT')).toBe(false);
    expect(config.get('FW_AI_MODEL')).toBe('openai/gpt-4o-mini');
    expect(config.get('FW_CSP')).toBe(''); // empty is a value here: send no policy
    expect(config.get('PORT')).toBe(0);
    expect(config.get('DATABASE_URL')).toBeUndefined();
    expect(config.given('FW_MAX_CONNECTIONS')).toBe('64');
    expect(config.given('FW_AI_MODEL')).toBeUndefined();
    expect(config.problems()).toEqual([]);
  });

  it('refuses a malformed value with bad_config naming the variable and the way out', () => {
    const config = resolveConfig({ FW_MAX_CONNECTIONS: '0', FW_REQUEST_TIMEOUT_MS: '1e3', FW_TRACE_TENANT: 'maybe' });
    const error = (() => {
      try {
        config.get('FW_MAX_CONNECTIONS');
      } catch (caught) {
        return caught;
      }
    })() as FwFailure;
    expect(error).toBeInstanceOf(FwFailure);
    expect(error.kind).toBe('bad_config');
    expect(error.message).toBe('FW_MAX_CONNECTIONS must be a whole number ≥ 1, got "0".');
    expect(error.suggestions).toEqual(['unset FW_MAX_CONNECTIONS for the default (1024)']);
    expect(config.problems().map((p) => p.message)).toEqual([
      'FW_REQUEST_TIMEOUT_MS must be a whole number ≥ 1, got "1e3".',
      'FW_MAX_CONNECTIONS must be a whole number ≥ 1, got "0".',
      'FW_TRACE_TENANT must be 1 or 0 (true/false), got "maybe".',
    ]);
  });

  it('reads an app variable by name without making it fw’s', () => {
    const config = resolveConfig({ TOOL_KEY: 'k' });
    expect(config.appVariable('TOOL_KEY')).toBe('k');
    expect(describeConfig(config).some((row) => (row.name as string) === 'TOOL_KEY')).toBe(false);
  });

  it('the defaults the table documents are the ones the code applies', () => {
    expect(VARIABLES.FW_AI_APPROVAL_TTL_MS.default).toBe(DEFAULT_APPROVAL_TTL_MS);
    expect(VARIABLES.FW_JWT_MAX_AGE.default).toBe(String(DEFAULT_MAX_TOKEN_AGE_SECONDS));
  });
});

describe('describeConfig', () => {
  it('never shows a secret’s text: set secrets are masked to their length, also when malformed elsewhere', () => {
    const secret = 'postgres://svc:hunter2@db.internal/app';
    const rows = describeConfig(resolveConfig({ DATABASE_URL: secret, FW_ADMIN_TOKEN: 'adm1n', FW_MAX_CONNECTIONS: 'x' }));
    expect(JSON.stringify(rows)).not.toContain('hunter2');
    expect(JSON.stringify(rows)).not.toContain('adm1n');
    expect(rows.find((r) => r.name === 'DATABASE_URL')).toMatchObject({ source: 'environment', value: `•••• (set, ${secret.length} characters)` });
    expect(rows.find((r) => r.name === 'FW_MAX_CONNECTIONS')).toMatchObject({ source: 'environment', value: null, problem: 'FW_MAX_CONNECTIONS must be a whole number ≥ 1, got "x".' });
    expect(rows.find((r) => r.name === 'FW_KEEP_ALIVE_TIMEOUT_MS')).toMatchObject({ source: 'default', value: 5000 });
    expect(rows.find((r) => r.name === 'FW_JWT_HS_SECRET')).toMatchObject({ source: 'unset', value: null });
  });
});

describe('the one home of the environment', () => {
  it('docs/config.md shows the table the variables make (regenerate: fw config --docs)', () => {
    const doc = readFileSync(path.join(repoRoot, 'docs/config.md'), 'utf8');
    const generated = /<!-- generated: [^>]*-->\n\n([\s\S]*)<!-- end generated -->/.exec(doc)?.[1];
    expect(generated).toBe(renderConfigDocs());
  });

  it('no shipped module but runtime/config/environment.ts reads process.env', () => {
    // The Node.js guard runs before anything of fw loads and reads only its own re-run marker (pinned-node.ts).
    const nodeGuard = ['cli/bin.ts', 'runtime/core/pinned-node.ts'];
    const readers = shippedSources().filter((file) => file !== 'runtime/config/environment.ts' && !nodeGuard.includes(file) && /\bprocess\.env\b/.test(readFileSync(path.join(repoRoot, file), 'utf8')));
    expect(readers).toEqual([]);
  });

  it('only resolveConfig reads the environment as configuration (the others copy it for a child process)', () => {
    const copiesForChildren = ['runtime/external/bridge.ts', 'toolchain/test/test-run.ts'];
    const readers = shippedSources().filter((file) => !file.startsWith('runtime/config/') && /\breadEnvironment\(/.test(readFileSync(path.join(repoRoot, file), 'utf8')));
    expect(readers.sort()).toEqual(copiesForChildren);
  });

  it('every FW_ variable the shipped code names is in the table', () => {
    // Names that are not variables fw reads: constants, prefixes in messages, the app's own VITE_/NUXT_
    // variables, and the canary secret the red team plants (and looks for in outputs).
    // FW_REEXEC_PINNED_NODE is the marker fw sets on its own re-run under the app's pinned Node.js.
    const notVariables = new Set(['FW_SCHEMA', 'FW_JWT_', 'FW_NUXT_MODULE', 'FW_URL', 'FW_VERSION', 'FW_REDTEAM_API_KEY', 'FW_REEXEC_PINNED_NODE']);
    const named = new Set<string>();
    for (const file of shippedSources()) {
      for (const [name] of readFileSync(path.join(repoRoot, file), 'utf8').matchAll(/(?<![A-Z_])FW_[A-Z_]+/g)) if (!notVariables.has(name)) named.add(name);
    }
    expect([...named].filter((name) => !(name in VARIABLES)).sort()).toEqual([]);
  });
});

/** The product's TypeScript (what npm ships), tests and type tests excluded. */
function shippedSources(): string[] {
  const files: string[] = [];
  for (const top of ['runtime', 'client', 'plugin', 'toolchain', 'cli', 'testing']) {
    for (const entry of readdirSync(path.join(repoRoot, top), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !/\.(ts|tsx|vue)$/.test(entry.name) || /\.(test|typetest)\.tsx?$/.test(entry.name)) continue;
      files.push(path.relative(repoRoot, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
    }
  }
  return files.sort();
}
