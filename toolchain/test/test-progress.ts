import { styleText } from 'node:util';

/**
 * What fw's progress reporter (test-progress-reporter.ts) sends from inside Vitest as the run goes, one
 * JSON line each: the files planned, each test's outcome, each file done.
 */
export type TestProgressEvent =
  | { type: 'run-start'; files: number }
  | { type: 'test'; state: 'passed' | 'failed' | 'skipped' }
  | { type: 'file-end' };

/** Where a run has got to. */
export interface TestProgress {
  files: number;
  filesDone: number;
  passed: number;
  failed: number;
  skipped: number;
}

export const noProgress: TestProgress = { files: 0, filesDone: 0, passed: 0, failed: 0, skipped: 0 };

/** The progress after one more event (pure). A new run (`fw test --watch` reruns) starts from zero. */
export function advanceTestProgress(progress: TestProgress, event: TestProgressEvent): TestProgress {
  switch (event.type) {
    case 'run-start':
      return { ...noProgress, files: event.files };
    case 'test':
      return { ...progress, [event.state]: progress[event.state] + 1 };
    case 'file-end':
      return { ...progress, filesDone: progress.filesDone + 1 };
  }
}

/**
 * The status line's text: `Testing: 3/10 files, 25 passed, 1 failed, 2 skipped` (counts that are
 * zero left out, the failed in red and the passed in green when coloured).
 *
 * @example
 *   formatTestProgress({ files: 10, filesDone: 3, passed: 25, failed: 1, skipped: 0 }, false)
 *   // 'Testing: 3/10 files, 25 passed, 1 failed'
 */
export function formatTestProgress(progress: TestProgress, colour: boolean): string {
  const style = (format: 'red' | 'green' | 'dim', text: string) => (colour ? styleText(format, text, { validateStream: false }) : text);
  const parts = [`${progress.filesDone}/${progress.files} files`];
  if (progress.passed > 0) parts.push(style('green', `${progress.passed} passed`));
  if (progress.failed > 0) parts.push(style('red', `${progress.failed} failed`));
  if (progress.skipped > 0) parts.push(style('dim', `${progress.skipped} skipped`));
  return `Testing: ${parts.join(', ')}`;
}

/** An event from one line the reporter wrote; undefined for anything else. */
export function parseTestProgressEvent(line: string): TestProgressEvent | undefined {
  try {
    const event = JSON.parse(line) as Partial<TestProgressEvent> | null;
    if (event?.type === 'run-start' && typeof event.files === 'number') return { type: 'run-start', files: event.files };
    if (event?.type === 'test' && (event.state === 'passed' || event.state === 'failed' || event.state === 'skipped')) return { type: 'test', state: event.state };
    if (event?.type === 'file-end') return { type: 'file-end' };
  } catch {}
  return undefined;
}
