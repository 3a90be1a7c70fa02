import { defineCommand } from 'citty';
import { diagnoseLastTestRun } from '../../toolchain/repair/repair.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { log, printJson } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

const diagnose = defineCommand({
  meta: { name: 'diagnose', description: 'Map failures to their likely causes in the app, with hints and commands' },
  args: {
    'from-last-test-run': { type: 'boolean', description: 'Read the run fw test recorded in .fw/last-test-run.json (required for now)' },
    root: { type: 'string', description: 'The app directory', default: '.' },
    json: { type: 'boolean', description: 'Print one JSON document { ok, run, failures }' },
  },
  async run({ args }) {
    if (!args['from-last-test-run']) {
      throw new FwFailure('invalid_arguments', 'Say what to diagnose: --from-last-test-run is the only source so far.', { suggestions: ['fw repair diagnose --from-last-test-run'] });
    }
    const diagnosis = await diagnoseLastTestRun(args.root);
    if (args.json) printJson(diagnosis);
    else {
      log(`Last test run ${diagnosis.run.when}: ${diagnosis.run.passed} passed, ${diagnosis.run.failed} failed.`);
      for (const failure of diagnosis.failures) {
        log(`✖ ${failure.file} › ${failure.test}\n  ${failure.message.split('\n')[0]}`);
        for (const cause of failure.causes) log(`  → ${cause.kind}${cause.entry ? ` (${cause.entry})` : ''}: ${cause.detail}\n    hint: ${cause.hint}\n    run: ${cause.suggestedCommand}`);
      }
    }
    return { exitCode: diagnosis.ok ? 0 : 1 };
  },
});

export default defineCommand({
  meta: commandMeta('repair'),
  subCommands: { diagnose },
});
