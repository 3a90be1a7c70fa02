import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { FwFailure } from '../runtime/failure.ts';
import type { AppDefinition } from '../runtime/registry.ts';
import { analyseApp } from './analyse/app-model.ts';
import { resolvePackageBin, runNodeScript } from './app-bin.ts';
import { runChecks } from './check.ts';
import { type SeverityDiagnostic, toFailureDiagnostics } from './failure-diagnostics.ts';
import { generateFromApp } from './generate/generate.ts';
import { describeDrift } from './generate/sync-files.ts';
import { loadAppOnce } from './load-app-once.ts';
import { AppLoadError } from './load-app.ts';
import { structuralFindings } from './redteam/structural.ts';
import { planAppTests, runAppTests } from './test-run.ts';
import { checkMigrations, probeBoot } from './verify-database.ts';

/** How much `fw verify` runs: each level is the one before plus more gates. */
export type VerifyLevel = 'smoke' | 'standard' | 'strict';

/** The aliases by intent: `quick` = smoke, `agent` = standard (the default), `release` = strict. */
export const verifyLevelAliases = { quick: 'smoke', agent: 'standard', release: 'strict' } as const satisfies Record<string, VerifyLevel>;

const levels: readonly VerifyLevel[] = ['smoke', 'standard', 'strict'];

/**
 * A level or alias by name; fails with `invalid_arguments` naming the choices.
 *
 * @example
 *   resolveVerifyLevel('release') // 'strict'
 */
export function resolveVerifyLevel(name: string): VerifyLevel {
  if ((levels as readonly string[]).includes(name)) return name as VerifyLevel;
  const alias = verifyLevelAliases[name as keyof typeof verifyLevelAliases];
  if (alias) return alias;
  throw new FwFailure('invalid_arguments', `Unknown verify level "${name}".`, {
    suggestions: ['fw verify --smoke (quick) | --standard (agent) | --strict (release)'],
  });
}

export type GateName = 'generated' | 'check' | 'typecheck' | 'migrations' | 'boot' | 'tests' | 'redteam' | 'web-build' | 'backend-build';

/** A gate's finding; errors fail the gate. Check diagnostics add `hint` and `suggestedCommand`. */
export type VerifyDiagnostic = SeverityDiagnostic & { suggestedCommand?: string };

export interface GateResult {
  name: GateName;
  /** `failed` when a diagnostic is an error; `skipped` says why in `reason`. */
  status: 'passed' | 'failed' | 'skipped';
  durationMs: number;
  diagnostics: VerifyDiagnostic[];
  reason?: string;
}

/** `fw verify --json`. `ok` is false when any gate failed. */
export interface VerifyReport {
  ok: boolean;
  level: VerifyLevel;
  gates: GateResult[];
  durationMs: number;
}

interface VerifyContext {
  root: string;
  /** The backend as `fw generate` loads it; undefined when it does not load. */
  app: AppDefinition | undefined;
  web: 'vite' | 'nuxt' | 'none';
}

type GateOutcome = { diagnostics: VerifyDiagnostic[] } | { skipped: string; diagnostics?: VerifyDiagnostic[] };

interface Gate {
  name: GateName;
  level: VerifyLevel;
  run(ctx: VerifyContext): Promise<GateOutcome>;
}

const appDoesNotLoad = { skipped: 'The app does not load (see the generated and check gates).' } as const;

/**
 * The gates in the order they run. `migrations` runs before `boot` because the boot applies additive
 * migrations to the app database, after which nothing would be pending.
 */
const gates: readonly Gate[] = [
  { name: 'generated', level: 'smoke', run: generatedGate },
  { name: 'check', level: 'smoke', run: checkGate },
  { name: 'typecheck', level: 'smoke', run: typecheckGate },
  { name: 'migrations', level: 'strict', run: async (ctx) => (ctx.app ? { diagnostics: await checkMigrations(ctx.root, ctx.app) } : appDoesNotLoad) },
  { name: 'boot', level: 'smoke', run: async (ctx) => (ctx.app ? { diagnostics: await probeBoot(ctx.root, ctx.app) } : appDoesNotLoad) },
  { name: 'tests', level: 'standard', run: testsGate },
  { name: 'redteam', level: 'strict', run: redteamGate },
  { name: 'web-build', level: 'strict', run: webBuildGate },
  { name: 'backend-build', level: 'strict', run: async () => ({ skipped: 'The backend build lands with `fw build`, which does not exist yet; typecheck and boot cover the backend meanwhile.' }) },
];

/**
 * `fw verify`: runs the gates of `level` in order and reports every one; a failed gate does not stop
 * the rest. Writes nothing to the app's sources (drift is reported, not regenerated); the boot applies
 * additive migrations to the app database as `fw dev` would.
 *
 * @example
 *   const report = await verify({ root: '.', level: 'standard' });
 *   report.gates.filter((g) => g.status === 'failed').map((g) => g.name) // e.g. ['typecheck']
 */
export async function verify(options: { root: string; level: VerifyLevel }): Promise<VerifyReport> {
  const started = performance.now();
  const root = path.resolve(options.root);
  const ctx: VerifyContext = { root, app: undefined, web: webLayout(root) };
  const results: GateResult[] = [];
  const rank = levels.indexOf(options.level);
  for (const gate of gates) {
    if (levels.indexOf(gate.level) > rank) continue;
    const gateStarted = performance.now();
    let outcome: GateOutcome;
    try {
      outcome = await gate.run(ctx);
    } catch (error) {
      outcome = { diagnostics: toFailureDiagnostics(error) };
    }
    const durationMs = Math.round(performance.now() - gateStarted);
    if ('skipped' in outcome) results.push({ name: gate.name, status: 'skipped', durationMs, diagnostics: outcome.diagnostics ?? [], reason: outcome.skipped });
    else {
      const failed = outcome.diagnostics.some((d) => d.severity === 'error');
      results.push({ name: gate.name, status: failed ? 'failed' : 'passed', durationMs, diagnostics: outcome.diagnostics });
    }
  }
  return { ok: results.every((g) => g.status !== 'failed'), level: options.level, gates: results, durationMs: Math.round(performance.now() - started) };
}

/** `fw generate --check`; it also loads the app for the gates that need it. */
async function generatedGate(ctx: VerifyContext): Promise<GateOutcome> {
  try {
    ctx.app = await loadAppOnce(ctx.root);
  } catch (error) {
    if (!(error instanceof AppLoadError)) throw error;
    return { diagnostics: toFailureDiagnostics(error).map((d) => ({ ...d, hint: 'Fix the file named; generation needs an app that loads.', suggestedCommand: 'fw check --json' })) };
  }
  const generated = await generateFromApp(ctx.app, { root: ctx.root, check: true });
  return {
    diagnostics: generated.files
      .filter((f) => f.status === 'drifted')
      .map((f) => ({
        path: f.path,
        code: 'generated_drift',
        severity: 'error' as const,
        message: `${f.path} is out of date. ${describeDrift(f)}`,
        hint: 'Regenerate; never edit files under src/fw/_generated/ by hand.',
        suggestedCommand: 'fw generate',
      })),
  };
}

/** `fw check` without its drift findings (the generated gate reports those). */
async function checkGate(ctx: VerifyContext): Promise<GateOutcome> {
  const report = await runChecks({ root: ctx.root });
  return { diagnostics: report.diagnostics.filter((d) => d.code !== 'generated_drift') };
}

/** The app's own TypeScript over `tsconfig.json` and, for a Vite `web/`, `web/tsconfig.json`. */
async function typecheckGate(ctx: VerifyContext): Promise<GateOutcome> {
  const projects = ['tsconfig.json', ...(ctx.web === 'vite' ? ['web/tsconfig.json'] : [])].filter((p) => existsSync(path.join(ctx.root, p)));
  if (projects.length === 0) return { skipped: 'No tsconfig.json in the app.' };
  const tsc = resolvePackageBin(ctx.root, 'typescript', 'tsc', { fallbackToFw: true });
  if (!tsc) return { skipped: 'TypeScript is installed neither in the app nor with fw (npm install -D typescript).' };
  const diagnostics: VerifyDiagnostic[] = [];
  if (tsc.from === 'fw') diagnostics.push({ path: 'package.json', code: 'typescript_from_fw', severity: 'info', message: `The app has no typescript; used fw's (${tsc.version}).` });
  if (ctx.web === 'nuxt') diagnostics.push({ path: 'web/', code: 'web_typecheck_not_run', severity: 'info', message: 'web/ is a Nuxt app: its .vue files need `nuxt typecheck web` (vue-tsc), which fw verify does not run yet.' });
  for (const project of projects) {
    const result = await runNodeScript(tsc.file, ['-p', project, '--noEmit', '--pretty', 'false'], { cwd: ctx.root });
    const found = parseTscOutput(result.stdout + result.stderr);
    diagnostics.push(...found);
    if (result.code !== 0 && !found.some((d) => d.severity === 'error')) {
      diagnostics.push({ path: project, code: 'typecheck_failed', severity: 'error', message: `tsc -p ${project} exited with ${result.code}: ${excerpt(result.stdout + result.stderr)}` });
    }
  }
  return { diagnostics };
}

/** `src/x.ts(3,5): error TS2322: …` lines (plus their indented continuation) as diagnostics. */
export function parseTscOutput(output: string): VerifyDiagnostic[] {
  const diagnostics: VerifyDiagnostic[] = [];
  for (const line of output.split('\n')) {
    const located = /^(.+?)\((\d+),(\d+)\): (error|warning) (TS\d+): (.*)$/.exec(line);
    const global = located ? null : /^(error|warning) (TS\d+): (.*)$/.exec(line);
    if (located) {
      const [, file, row, column, severity, code, message] = located;
      diagnostics.push({ path: `${file!.split('\\').join('/')}:${row}:${column}`, code: code!, severity: severity as 'error' | 'warning', message: message! });
    } else if (global) {
      diagnostics.push({ path: '', code: global[2]!, severity: global[1] as 'error' | 'warning', message: global[3]! });
    } else if (/^\s+\S/.test(line) && diagnostics.length > 0) {
      diagnostics.at(-1)!.message += `\n${line.trimEnd()}`;
    }
  }
  return diagnostics;
}

/** `vitest run` in the app through fw's reporter, so the run is recorded for `fw repair diagnose`. */
async function testsGate(ctx: VerifyContext): Promise<GateOutcome> {
  const plan = await planAppTests(ctx.root);
  if (!plan.run) return { skipped: plan.reason };
  const result = await runAppTests(plan.vitest, { root: ctx.root });
  const diagnostics: VerifyDiagnostic[] = (result.run?.failures ?? []).map((f) => ({
    path: f.file,
    code: 'test_failed',
    severity: 'error' as const,
    message: `${f.test}: ${f.message}`,
    hint: 'The run is recorded in .fw/last-test-run.json.',
    suggestedCommand: 'fw repair diagnose --from-last-test-run --json',
  }));
  if (result.run) {
    const t = result.run.totals;
    diagnostics.push({ path: '.fw/last-test-run.json', code: 'test_totals', severity: 'info', message: `${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped in ${t.files} file(s).` });
  }
  if (result.exitCode !== 0 && diagnostics.every((d) => d.severity !== 'error')) {
    diagnostics.push({ path: '', code: 'tests_failed', severity: 'error', message: `vitest run exited with ${result.exitCode}: ${excerpt(result.stderr || result.stdout)}`, suggestedCommand: 'fw test' });
  }
  return { diagnostics };
}

/** `fw ai redteam`'s structural pass: failing findings are errors, the rest warnings. */
async function redteamGate(ctx: VerifyContext): Promise<GateOutcome> {
  if (!ctx.app) return appDoesNotLoad;
  const findings = structuralFindings(await analyseApp(ctx.root, ctx.app));
  return {
    diagnostics: findings.map((f) => ({
      path: f.tool ?? f.agent ?? '',
      code: f.code,
      severity: f.status === 'fail' ? ('error' as const) : ('warning' as const),
      message: f.message,
      hint: f.hint,
      suggestedCommand: 'fw ai redteam --json',
    })),
  };
}

/** `vite build web` into a scratch directory (the app's own `web/dist` is left alone), then removed. */
async function webBuildGate(ctx: VerifyContext): Promise<GateOutcome> {
  if (ctx.web === 'none') return { skipped: 'The app has no web/.' };
  if (ctx.web === 'nuxt') return { skipped: 'web/ is a Nuxt app; it builds with `nuxt build web`, which fw verify does not run yet.' };
  const vite = resolvePackageBin(ctx.root, 'vite', 'vite', { fallbackToFw: true });
  if (!vite) return { skipped: 'Vite is installed neither in the app nor with fw.' };
  const outDir = path.join(ctx.root, '.fw', 'verify', 'web-dist');
  try {
    const result = await runNodeScript(vite.file, ['build', 'web', '--outDir', outDir, '--emptyOutDir', '--logLevel', 'warn'], {
      cwd: ctx.root,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: undefined },
    });
    if (result.code === 0) return { diagnostics: [] };
    const output = result.stderr || result.stdout;
    const at = output.indexOf('error during build');
    return { diagnostics: [{ path: 'web/', code: 'web_build_failed', severity: 'error', message: `vite build web failed: ${excerpt(at >= 0 ? output.slice(at) : output)}`, suggestedCommand: 'vite build web' }] };
  } finally {
    await rm(path.join(ctx.root, '.fw', 'verify'), { recursive: true, force: true });
  }
}

function webLayout(root: string): VerifyContext['web'] {
  if (!existsSync(path.join(root, 'web'))) return 'none';
  return ['nuxt.config.ts', 'nuxt.config.js', 'nuxt.config.mjs'].some((f) => existsSync(path.join(root, 'web', f))) ? 'nuxt' : 'vite';
}

/** The first lines of a tool’s output, enough to act on. */
function excerpt(output: string, lines = 15): string {
  return output.trim().split('\n').slice(0, lines).join('\n');
}
