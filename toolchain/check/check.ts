import path from 'node:path';
import { type CheckDiagnostic, checkDiagnostic, fromGenerateDiagnostic, sortDiagnostics } from '../../plugin/analyse/check-diagnostic.ts';
import { generateFromApp } from '../../plugin/generate/generate.ts';
import { driftHint, summariseDrift } from '../../plugin/generate/sync-files.ts';
import { loadAppOnce } from '../../plugin/load-app-once.ts';
import { AppLoadError, type AppLoadProblem } from '../../plugin/app-load-error.ts';
import { typeCheckDiagnostics } from './type-diagnostics.ts';

/** One group of checks and whether it passed (no error-severity diagnostic). */
export interface CheckResult {
  name: CheckName;
  ok: boolean;
  errors: number;
  warnings: number;
  infos: number;
}

export type CheckName = 'load' | 'generated' | 'analysis' | 'frontend' | 'boundaries' | 'policies' | 'types';

/** `fw check --json`: `ok` is false when any diagnostic is an error. */
export interface CheckReport {
  ok: boolean;
  checks: CheckResult[];
  diagnostics: CheckDiagnostic[];
}

const boundaryCodes = new Set(['server_import_in_frontend', 'agent_in_disallowed_context']);
/** Backend findings that come with the contract checks but belong to the entry analysis. */
const analysisCodes = new Set(['unknown_workflow', 'unknown_scheduled_call', 'unknown_cron_target', 'invalid_cron']);

export interface CheckOptions {
  root: string;
  /**
   * Run the app's TypeScript too (default true): its errors are `type_error` diagnostics of the `types`
   * check. `fw verify` turns it off and reports the same typecheck as its own gate, so tsc runs once.
   */
  typecheck?: boolean;
}

/**
 * Runs every static check of an app without writing anything: the app loads (policies defined),
 * `src/fw/_generated/` matches the sources (`fw generate --check`), the entries' analysis, the
 * frontend contract, the server/agent boundaries, and the app's types (its own TypeScript, in a worker
 * thread while the rest runs).
 *
 * @example
 *   const report = await runChecks({ root: '.' });
 *   report.checks // [{ name: 'load', ok: true, … }, { name: 'generated', ok: true, … }, …, { name: 'types', … }]
 */
export async function runChecks(options: CheckOptions): Promise<CheckReport> {
  const root = path.resolve(options.root);
  // Started first: it takes seconds, in a thread of its own, while the app loads and is analysed here.
  const typing = options.typecheck === false ? undefined : typeCheckDiagnostics(root);
  // Settled even when loading throws, so a rejected check is never left unhandled.
  typing?.catch(() => undefined);
  /** The `types` check (none when it was not asked for) and its diagnostics. */
  const types = async (): Promise<{ checks: CheckResult[]; diagnostics: CheckDiagnostic[] }> => {
    if (!typing) return { checks: [], diagnostics: [] };
    const diagnostics = await typing;
    return { checks: [result('types', diagnostics)], diagnostics };
  };
  let app;
  try {
    app = await loadAppOnce(root);
  } catch (error) {
    if (!(error instanceof AppLoadError)) throw error;
    const typed = await types();
    const loaded = sortDiagnostics(error.problems.map(loadProblem));
    const group = (name: CheckName, codes: (code: string) => boolean) => result(name, loaded.filter((d) => codes(d.code)));
    const checks = [group('load', (c) => c !== 'unknown_policy'), group('policies', (c) => c === 'unknown_policy'), ...typed.checks];
    return { ok: false, checks, diagnostics: sortDiagnostics([...loaded, ...typed.diagnostics]) };
  }
  const generated = await generateFromApp(app, { root, check: true });
  const drifted = summariseDrift(generated.files);
  const drift = drifted === null ? [] : [checkDiagnostic({
    code: 'generated_drift', severity: 'error', file: drifted.file, line: 1, column: 1,
    message: drifted.message, hint: driftHint, suggestedCommand: 'fw generate',
  })];
  const analysis = [...generated.diagnostics.map(fromGenerateDiagnostic), ...generated.checks.filter((d) => analysisCodes.has(d.code))];
  const frontend = generated.checks.filter((d) => !boundaryCodes.has(d.code) && !analysisCodes.has(d.code));
  const boundaries = generated.checks.filter((d) => boundaryCodes.has(d.code));
  const checks = [
    result('load', []),
    result('generated', drift),
    result('analysis', analysis),
    result('frontend', frontend),
    result('boundaries', boundaries),
    result('policies', []),
  ];
  const typed = await types();
  checks.push(...typed.checks);
  const diagnostics = sortDiagnostics([...drift, ...analysis, ...frontend, ...boundaries, ...typed.diagnostics]);
  return { ok: checks.every((c) => c.ok), checks, diagnostics };
}

function result(name: CheckName, diagnostics: readonly CheckDiagnostic[]): CheckResult {
  const count = (severity: CheckDiagnostic['severity']) => diagnostics.filter((d) => d.severity === severity).length;
  return { name, ok: count('error') === 0, errors: count('error'), warnings: count('warning'), infos: count('info') };
}

/** Load problems that keep a code of their own (the rest are `app_invalid`). */
const ownLoadCodes = new Set(['unknown_policy', 'invalid_cron', 'unknown_cron_target']);

function loadProblem(problem: AppLoadProblem): CheckDiagnostic {
  const policy = problem.code === 'unknown_policy';
  return checkDiagnostic({
    code: problem.code && ownLoadCodes.has(problem.code) ? (problem.code as CheckDiagnostic['code']) : 'app_invalid',
    severity: 'error',
    message: problem.message,
    file: problem.file ?? (policy ? 'src/policies.ts' : '.'),
    line: problem.line ?? 1,
    column: problem.column ?? 1,
    hint: problem.hint ?? 'Fix the file named; fw reloads it on the next run.',
    suggestedCommand: policy ? 'fw inspect client --json' : 'fw dev --once --json',
  });
}
