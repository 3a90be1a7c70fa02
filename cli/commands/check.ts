import { defineCommand } from 'citty';
import { runChecks } from '../../toolchain/check/check.ts';
import { log, printJson } from '../output.ts';
import { printDiagnostics } from './inspect.ts';

export default defineCommand({
  meta: { name: 'check', description: 'Check the app without changing it: generated files, frontend contract, boundaries, policies' },
  args: {
    root: { type: 'string', description: 'The app directory', default: '.' },
    json: { type: 'boolean', description: 'Print one JSON document { ok, checks, diagnostics }' },
  },
  async run({ args }) {
    const report = await runChecks({ root: args.root });
    if (args.json) printJson(report);
    else {
      printDiagnostics(report.diagnostics);
      log(`fw check: ${report.checks.map((c) => `${c.ok ? '✔' : '✖'} ${c.name}`).join('  ')}`);
    }
    return { exitCode: report.ok ? 0 : 1 };
  },
});
