import path from 'node:path';
import { defineCommand } from 'citty';
import { FwFailure } from '../../runtime/core/failure.ts';
import { log, printJson } from '../output.ts';

const validate = defineCommand({
  meta: { name: 'validate', description: 'Check an external service manifest (a file, or a service URL serving GET /manifest) against schemas/fw-manifest.schema.json and the protocol rules' },
  args: {
    file: { type: 'positional', description: 'The manifest file (e.g. fw.manifest.json) or a service base URL', required: true },
    json: { type: 'boolean', description: 'Print one JSON document' },
  },
  async run({ args }) {
    const { fetchManifest } = await import('../../plugin/external-manifests.ts');
    const { validateManifest } = await import('../../runtime/external/manifest.ts');
    const { value, from } = await fetchManifest(process.cwd(), args.file);
    const result = validateManifest(value);
    if (!result.ok) {
      throw new FwFailure('invalid_manifest', `${from} is not a valid fw manifest (${result.diagnostics.filter((d) => d.severity === 'error').length} error(s)).`, {
        suggestions: ['Fix the fields named above, then run fw manifest validate again.'],
        diagnostics: result.diagnostics,
      });
    }
    const manifest = result.manifest!;
    const report = { ok: true, file: /^https?:/i.test(from) ? from : path.resolve(args.file), service: manifest.service.name, entries: manifest.entries.length, diagnostics: result.diagnostics };
    if (args.json) return printJson(report);
    log(`✔ ${report.file}: service "${report.service}" (${manifest.service.transport}), ${report.entries} entr${report.entries === 1 ? 'y' : 'ies'}`);
    for (const d of result.diagnostics) log(`  ⚠ ${d.path}: ${d.message}\n    hint: ${d.hint}`);
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
  meta: { name: 'manifest', description: 'External service manifests (the external runtime protocol)' },
  subCommands: { validate, import: importCommand },
});

export default manifest;
