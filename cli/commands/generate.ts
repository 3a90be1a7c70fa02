import { defineCommand } from 'citty';
import type { GenerateDiagnostic } from '../../plugin/analyse/app-model.ts';
import { generateArtifacts } from '../../plugin/generate/generate.ts';
import { describeDrift } from '../../plugin/generate/sync-files.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { log, printJson } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

export default defineCommand({
  meta: commandMeta('generate'),
  args: {
    root: { type: 'string', description: 'The app directory', default: '.' },
    check: { type: 'boolean', description: 'Write nothing; fail if any generated file is missing or out of date' },
    json: { type: 'boolean', description: 'Print one JSON document' },
  },
  async run({ args }) {
    const check = Boolean(args.check);
    const { files, diagnostics } = await generateArtifacts({ root: args.root, check });

    const drifted = files.flatMap((f) => (f.status === 'drifted' ? [f] : []));
    if (drifted.length > 0) {
      throw new FwFailure('generated_drift', `${drifted.length} generated file(s) out of date: ${drifted.map((f) => f.path).join(', ')}.`, {
        suggestions: ['fw generate'],
        diagnostics: drifted.map((f) => ({ path: f.path, message: describeDrift(f), code: `generated_${f.reason.replace('-', '_')}` })),
      });
    }
    if (args.json) {
      printJson({ ok: true, files, diagnostics });
      return;
    }
    const written = files.filter((f) => f.status === 'written');
    if (check) log(`fw generate --check: ${files.length} generated files are up to date.`);
    else if (written.length === 0) log(`fw generate: ${files.length} files already up to date.`);
    else {
      log(`fw generate: wrote ${written.length} of ${files.length} files:`);
      for (const file of written) log(`  ✎ ${file.path}`);
    }
    for (const d of diagnostics) log(formatDiagnostic(d));
  },
});

function formatDiagnostic(d: GenerateDiagnostic): string {
  return `  ${d.severity === 'warning' ? '⚠' : 'ℹ'} ${d.path}: ${d.message}`;
}
