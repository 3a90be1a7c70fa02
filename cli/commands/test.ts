import path from 'node:path';
import { defineCommand } from 'citty';
import { planAppTests, runAppTests } from '../../toolchain/test/test-run.ts';
import { advanceTestProgress, formatTestProgress, noProgress } from '../../toolchain/test/test-progress.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { colourFor } from '../../runtime/config/colour.ts';
import { log, printJson } from '../output.ts';
import { createStatusLine } from '../progress.ts';
import { commandMeta } from '../command-meta.ts';

export default defineCommand({
  meta: commandMeta('test'),
  args: {
    root: { type: 'string', description: 'The app directory', default: '.' },
    json: { type: 'boolean', description: 'Send Vitest’s output to stderr and print the recorded run as one JSON document' },
    watch: { type: 'boolean', description: 'Keep running: rerun the affected tests on every change (vitest watch), recording each run' },
  },
  async run({ args, rawArgs }) {
    const root = path.resolve(args.root);
    const separator = rawArgs.indexOf('--');
    const vitestArgs = separator >= 0 ? rawArgs.slice(separator + 1) : [];
    if (args.watch && args.json) throw new FwFailure('invalid_arguments', '--watch and --json do not go together: a watch never ends with one document.', { suggestions: ['fw test --watch', 'fw test --json'] });
    const plan = await planAppTests(root);
    if (!plan.run && plan.kind === 'no_vitest') throw new FwFailure('vitest_missing', plan.reason, { suggestions: ['npm install -D vitest'] });
    if (!plan.run) throw new FwFailure('no_tests', plan.reason, { suggestions: ['Add a test file such as tests/notes.test.ts'] });
    // A status line on a terminal only (a run over 2 s shows files done and tests passed and failed so far);
    // --json, --watch (Vitest's own interactive screen) and piped output get Vitest's output as it is.
    const live = !args.json && !args.watch && process.stdout.isTTY === true && process.stderr.isTTY === true;
    const status = live ? createStatusLine(process.stderr) : undefined;
    const colour = colourFor(process.stderr);
    let progress = noProgress;
    status?.set('Testing: starting Vitest');
    const result = await runAppTests(plan.vitest, {
      root,
      args: vitestArgs,
      output: args.json ? 'stderr' : 'inherit',
      // Vitest writes to fw's own stdout: colour only where fw would colour (a terminal; FORCE_COLOR, NO_COLOR).
      colour: colourFor(process.stdout),
      watch: args.watch === true,
      ...(status
        ? {
            progress: {
              colour,
              onEvent: (event) => {
                progress = advanceTestProgress(progress, event);
                status.set(formatTestProgress(progress, colour));
              },
              onLine: (line, stream) => status.print(line, stream === 'stdout' ? process.stdout : process.stderr),
            },
          }
        : {}),
    });
    status?.end();
    if (args.json) printJson({ ok: result.exitCode === 0, exitCode: result.exitCode, run: result.run ?? null });
    else if (result.run && result.run.failures.length > 0) log('fw test: the run is recorded; `fw repair diagnose --from-last-test-run` maps the failures to their likely causes.');
    return { exitCode: result.exitCode };
  },
});
