import { defineCommand } from 'citty';
import { runChecks } from '../../toolchain/check/check.ts';
import { log, printJson } from '../output.ts';
import { printDiagnostics } from './inspect.ts';
import { commandMeta } from '../command-meta.ts';

export default defineCommand({
  meta: commandMeta('check'),
  args: {
    root: { type: 'string', description: 'The app directory', default: '.' },
    json: { type: 'boolean', description: 'Print one JSON document { ok, checks, diagnostics }' },
    typecheck: { type: 'boolean', description: "Typecheck the app with its TypeScript (tsconfig.json, web/tsconfig.json): errors are type_error diagnostics (--no-typecheck to skip)", default: true },
  },
  async run({ args }) {
    const report = await runChecks({ root: args.root, typecheck: args.typecheck !== false });
    if (args.json) printJson(report);
    else {
      printDiagnostics(report.diagnostics);
      log(`fw check: ${report.checks.map((c) => `${c.ok ? '✔' : '✖'} ${c.name}`).join('  ')}`);
    }
    return { exitCode: report.ok ? 0 : 1 };
  },
});
