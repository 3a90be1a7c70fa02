import { writeSync } from 'node:fs';
import type { Reporter, TestCase, TestSpecification } from 'vitest/node';
import type { TestProgressEvent } from './test-progress.ts';

/**
 * The file descriptor `fw test` opens for the events (a pipe), beside Vitest's stdout and stderr. This
 * reporter is on Vitest's command line only when fw opened it (test-run.ts), so it is never someone
 * else's file.
 */
export const TEST_PROGRESS_FD = 3;

/**
 * A Vitest reporter that tells `fw test` how the run goes, for its status line on a terminal: the files
 * planned, each test's outcome, each file done, one JSON line each on fd 3. It prints nothing.
 */
export default class FwTestProgressReporter implements Reporter {
  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    // One per file and project, as onTestModuleEnd comes.
    send({ type: 'run-start', files: specifications.length });
  }

  onTestCaseResult(testCase: TestCase): void {
    const { state } = testCase.result();
    if (state === 'passed' || state === 'failed' || state === 'skipped') send({ type: 'test', state });
  }

  onTestModuleEnd(): void {
    send({ type: 'file-end' });
  }
}

function send(event: TestProgressEvent): void {
  try {
    writeSync(TEST_PROGRESS_FD, `${JSON.stringify(event)}\n`);
  } catch {
    // A progress line is not worth failing a test run for (fw stopped reading: it is ending too).
  }
}
