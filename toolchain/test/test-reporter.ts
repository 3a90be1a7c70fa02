import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Reporter, SerializedError, TestModule, TestRunEndReason, Vitest } from 'vitest/node';

/** Where the last run is recorded, relative to the app (Vitest's root). */
export const LAST_TEST_RUN_FILE = '.fw/last-test-run.json';

/** `.fw/last-test-run.json`: what `fw repair diagnose --from-last-test-run` reads. */
export interface LastTestRun {
  version: 1;
  /** When the run ended (ISO 8601). */
  when: string;
  durationMs: number;
  reason: TestRunEndReason;
  totals: { files: number; tests: number; passed: number; failed: number; skipped: number };
  failures: TestFailureRecord[];
}

/** One failed test, a test file that did not load (`test: '(file)'`) or an unhandled error (`test: '(unhandled error)'`). */
export interface TestFailureRecord {
  /** App-relative, `/`-separated; `''` for an unhandled error outside any file. */
  file: string;
  /** The full name, suites joined by ` > `. */
  test: string;
  message: string;
  /** The stack without Node internals and dependency frames, at most 12 frames. */
  stack: string;
  /** The error's name, e.g. `AssertionError`, `FwError`. */
  name?: string;
  /** The error's `code` when it has one: an fw error code (`validation_failed`) or a SQLSTATE (`42P01`). */
  code?: string;
  /** An fw error's diagnostics (its `diagnostics` property). */
  diagnostics?: Array<{ path: string; code: string; message: string }>;
  /** An assertion's diff, trimmed. */
  diff?: string;
}

export interface FwTestReporterOptions {
  /** Where to write the record, relative to Vitest's root (default `.fw/last-test-run.json`). */
  outputFile?: string;
}

/**
 * A Vitest reporter that records the last run for `fw repair diagnose --from-last-test-run`: per
 * failed test its file, name, message and trimmed stack, plus totals and the time. It prints
 * nothing; `fw test` adds it next to the default reporter.
 *
 * @example
 *   // vitest.config.ts
 *   export default defineConfig({ test: { reporters: ['default', 'fwjs/test-reporter'] } });
 */
export default class FwTestReporter implements Reporter {
  readonly #outputFile: string;
  #root = process.cwd();
  #started = performance.now();

  constructor(options: FwTestReporterOptions = {}) {
    this.#outputFile = options.outputFile ?? LAST_TEST_RUN_FILE;
  }

  onInit(vitest: Vitest): void {
    this.#root = vitest.config.root;
  }

  onTestRunStart(): void {
    this.#started = performance.now();
  }

  async onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>, reason: TestRunEndReason): Promise<void> {
    const record = this.record(testModules, unhandledErrors, reason);
    const file = path.resolve(this.#root, this.#outputFile);
    await mkdir(path.dirname(file), { recursive: true });
    // Written whole, then renamed: a reader never sees half a record.
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`);
    await rename(temporary, file);
  }

  /** The record of a finished run (pure; `onTestRunEnd` writes it). */
  record(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>, reason: TestRunEndReason): LastTestRun {
    const totals = { files: testModules.length, tests: 0, passed: 0, failed: 0, skipped: 0 };
    const failures: TestFailureRecord[] = [];
    for (const module of testModules) {
      const file = this.#relative(module.moduleId);
      for (const error of module.errors()) failures.push(failureOf(file, '(file)', error, this.#root));
      for (const test of module.children.allTests()) {
        const result = test.result();
        totals.tests++;
        if (result.state === 'passed') totals.passed++;
        else if (result.state === 'skipped') totals.skipped++;
        else if (result.state === 'failed') {
          totals.failed++;
          const error = result.errors[0] ?? { message: 'The test failed without an error.' };
          failures.push(failureOf(file, test.fullName, error, this.#root));
        }
      }
    }
    for (const error of unhandledErrors) failures.push(failureOf('', '(unhandled error)', error, this.#root));
    return { version: 1, when: new Date().toISOString(), durationMs: Math.round(performance.now() - this.#started), reason, totals, failures };
  }

  #relative(file: string): string {
    return path.isAbsolute(file) ? path.relative(this.#root, file).split(path.sep).join('/') : file;
  }
}

function failureOf(file: string, test: string, error: SerializedError, root: string): TestFailureRecord {
  const code = typeof error.code === 'string' ? error.code : undefined;
  const diagnostics = Array.isArray(error.diagnostics) ? error.diagnostics.slice(0, 10).flatMap(diagnosticOf) : [];
  const diff = typeof error.diff === 'string' ? clip(stripAnsi(error.diff), 2000) : undefined;
  return {
    file,
    test,
    message: clip(stripAnsi(error.message ?? String(error)), 2000),
    stack: trimStack(error.stack ?? '', root),
    ...(typeof error.name === 'string' ? { name: error.name } : {}),
    ...(code ? { code } : {}),
    ...(diagnostics.length > 0 ? { diagnostics } : {}),
    ...(diff ? { diff } : {}),
  };
}

function diagnosticOf(value: unknown): Array<{ path: string; code: string; message: string }> {
  if (typeof value !== 'object' || value === null) return [];
  const d = value as Record<string, unknown>;
  return [{ path: String(d.path ?? ''), code: String(d.code ?? ''), message: clip(String(d.message ?? ''), 300) }];
}

/** The frames that point into the app: no message line, no Node internals, no node_modules; paths app-relative. */
function trimStack(stack: string, root: string): string {
  const frames = stripAnsi(stack)
    .split('\n')
    .filter((line) => /^\s+at /.test(line) && !line.includes('node:internal') && !line.includes('/node_modules/') && !line.includes('(node:'))
    .slice(0, 12)
    .map((line) => line.replaceAll(`file://${root}/`, '').replaceAll(`${root}/`, '').trimEnd());
  return frames.join('\n');
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}
