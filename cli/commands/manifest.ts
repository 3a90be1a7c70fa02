import path from 'node:path';
import { defineCommand } from 'citty';
import { FwFailure } from '../../runtime/core/failure.ts';
import { log, printJson } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

const validate = defineCommand({
  meta: { name: 'validate', description: 'Check an external service manifest (a file, or a service URL serving GET /manifest) against schemas/fw-manifest.schema.json, the protocol rules and — inside an app — the app’s policies, tables and liveQueries' },
  args: {
    file: { type: 'positional', description: 'The manifest file (e.g. fw.manifest.json) or a service base URL', required: true },
    root: { type: 'string', description: 'The app directory the manifest is for (checked when it has src/)', default: '.' },
    json: { type: 'boolean', description: 'Print one JSON document' },
  },
  async run({ args }) {
    const { checkManifest } = await import('../../toolchain/external/validate-manifest.ts');
    const check = await checkManifest({ source: args.file, root: args.root });
    if (!check.ok) {
      throw new FwFailure('invalid_manifest', `${check.from} is not a valid fw manifest${check.app === 'checked' ? ' for this app' : ''} (${check.diagnostics.filter((d) => d.severity === 'error').length} error(s)).`, {
        suggestions: ['Fix the fields named above, then run fw manifest validate again.'],
        diagnostics: check.diagnostics,
      });
    }
    const manifest = check.manifest!;
    const report = { ok: true, file: check.from, service: manifest.service.name, entries: manifest.entries.length, app: check.app, diagnostics: check.diagnostics };
    if (args.json) return printJson(report);
    log(`✔ ${report.file}: service "${report.service}" (${manifest.service.transport}), ${report.entries} entr${report.entries === 1 ? 'y' : 'ies'}${check.app === 'checked' ? ', policies and effects match the app' : ''}`);
    for (const d of check.diagnostics) log(`  ⚠ ${d.path}: ${d.message}\n    hint: ${d.hint}`);
  },
});

const importCommand = defineCommand({
  meta: { name: 'import', description: 'Add or update an external service in .fw/external-manifests.json (from a file or a service URL serving GET /manifest)' },
  args: {
    source: { type: 'positional', description: 'A manifest file, or the service base URL', required: true },
    root: { type: 'string', description: 'The app directory', default: '.' },
    json: { type: 'boolean', description: 'Print one JSON document' },
  },
  async run({ args }) {
    const { importManifest } = await import('../../plugin/external-manifests.ts');
    const result = await importManifest(path.resolve(args.root), args.source);
    if (args.json) return printJson({ ok: true, ...result });
    for (const d of result.diagnostics) log(`  ⚠ ${d.path}: ${d.message}\n    hint: ${d.hint}`);
    log(`fw manifest import: service "${result.service}" ${result.status} (${result.entries} entries) in ${result.file}. Next: fw generate`);
  },
});

// Not `export default defineCommand(…)`: see cli/commands/ai.ts (TypeScript 6 and dynamic imports).
const manifest = defineCommand({
  meta: commandMeta('manifest'),
  subCommands: { validate, import: importCommand },
});

export default manifest;
