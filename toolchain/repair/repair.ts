import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { FwFailure } from '../../runtime/core/failure.ts';
import { analyseApp } from '../../plugin/analyse/app-model.ts';
import { loadAppOnce } from '../../plugin/load-app-once.ts';
import { causesOf, type AppFacts, type RepairCause } from './repair-causes.ts';
import { LAST_TEST_RUN_FILE } from '../test/test-reporter.ts';
import { readLastTestRun } from '../test/test-run.ts';

export type { CauseKind, RepairCause } from './repair-causes.ts';

/** One failed test and what in the app likely caused it, most specific first. */
export interface RepairFailure {
  test: string;
  file: string;
  message: string;
  causes: RepairCause[];
}

/** `fw repair diagnose --from-last-test-run --json`. `ok` is true when the run had no failures. */
export interface RepairDiagnosis {
  ok: boolean;
  run: { when: string; failed: number; passed: number; skipped: number };
  failures: RepairFailure[];
}

/**
 * Reads `.fw/last-test-run.json` (written by `fw test`'s reporter) and maps each failure to likely
 * causes in fw's terms, each with a hint and a command. The app is loaded to name entries, their
 * policies and files, and the declared tables; when it does not load, causes are still given from the
 * error text alone.
 *
 * @example
 *   const { failures } = await diagnoseLastTestRun('.');
 *   failures[0].causes[0] // { kind: 'policy', entry: 'archiveNote', detail: '…', hint: '…', suggestedCommand: 'fw inspect client --json' }
 */
export async function diagnoseLastTestRun(root: string): Promise<RepairDiagnosis> {
  const appRoot = path.resolve(root);
  const run = await readLastTestRun(appRoot);
  if (!run) {
    throw new FwFailure('no_test_run', `No recorded test run: ${LAST_TEST_RUN_FILE} does not exist.`, { suggestions: ['fw test', 'fw verify --standard'] });
  }
  const facts = run.failures.length > 0 ? await appFacts(appRoot) : emptyFacts;
  return {
    ok: run.failures.length === 0,
    run: { when: run.when, failed: run.totals.failed, passed: run.totals.passed, skipped: run.totals.skipped },
    failures: run.failures.map((failure) => ({ test: failure.test, file: failure.file, message: failure.message, causes: causesOf(failure, facts) })),
  };
}

const emptyFacts: AppFacts = { entries: [], tables: [], staleEntries: [] };

/** What the mapping needs from the app; entries whose generated api differs from the sources are stale. */
async function appFacts(root: string): Promise<AppFacts> {
  let model;
  try {
    model = await analyseApp(root, await loadAppOnce(root));
  } catch {
    return { ...emptyFacts, entries: await generatedEntries(root) };
  }
  const entries = model.entries.map((e) => ({ name: e.name, kind: e.kind, file: e.file, policy: e.policy }));
  const generated = await generatedEntries(root);
  const key = (e: { name: string; kind: string; policy: string }) => `${e.name}:${e.kind}:${e.policy}`;
  const generatedKeys = new Set(generated.map(key));
  const sourceKeys = new Set(entries.map(key));
  const staleEntries = [...new Set([...entries.filter((e) => !generatedKeys.has(key(e))), ...generated.filter((e) => !sourceKeys.has(key(e)))].map((e) => e.name))];
  return { entries, tables: model.tables.map((t) => t.name), staleEntries };
}

/** The entries `src/fw/_generated/api.json` describes (what the frontend and clients were built against). */
async function generatedEntries(root: string): Promise<AppFacts['entries']> {
  try {
    const json = JSON.parse(await readFile(path.join(root, 'src/fw/_generated/api.json'), 'utf8')) as { entries?: Array<{ name: string; kind: string; policy: string }> };
    return (json.entries ?? []).map((e) => ({ name: e.name, kind: e.kind, policy: e.policy, file: null }));
  } catch {
    return [];
  }
}
