import { defineCommand } from 'citty';
import { connectUi } from '../../toolchain/connect-ui/connect-ui.ts';
import { formatFix } from '../../plugin/analyse/check-diagnostic.ts';
import { log, printJson } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

const connectUiCommand = defineCommand({
  meta: { name: 'connect-ui', description: 'Repair broken UI wiring: bridge file, provider or plugins, _generated/ imports, raw command fetches' },
  args: {
    'dry-run': { type: 'boolean', description: 'Print the diff (on stdout) and change nothing' },
    root: { type: 'string', description: 'The app directory', default: '.' },
    json: { type: 'boolean', description: 'Print one JSON document { ok, dryRun, fixed, unfixed, files, diff, remaining }' },
  },
  async run({ args }) {
    const report = await connectUi({ root: args.root, dryRun: Boolean(args['dry-run']) });
    if (args.json) printJson(report);
    else {
      if (report.dryRun && report.diff !== '') process.stdout.write(report.diff);
      for (const f of report.fixed) log(`✔ ${f.file}:${f.line}:${f.column} ${f.code}: ${f.fix}`);
      for (const u of report.unfixed) {
        log(`✖ ${u.file}:${u.line}:${u.column} ${u.code}: ${u.message}\n    ${u.reason}`);
        for (const line of formatFix(u, '    ')) log(line);
      }
      for (const d of report.remaining ?? []) {
        log(`✖ ${d.path} ${d.code}: ${d.message}`);
        for (const line of formatFix(d, '    ')) log(line);
      }
      const verb = report.dryRun ? 'would change' : 'changed';
      log(`fw do connect-ui: ${report.fixed.length} fixed, ${report.unfixed.length} left; ${verb} ${report.files.map((f) => `${f.path} (${f.change})`).join(', ') || 'nothing'}`);
    }
    return { exitCode: report.ok ? 0 : 1 };
  },
});

export default defineCommand({
  meta: commandMeta('do'),
  subCommands: { 'connect-ui': connectUiCommand },
});
