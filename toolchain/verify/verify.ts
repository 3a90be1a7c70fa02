import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { FwFailure } from '../../runtime/core/failure.ts';
import type { AppDefinition } from '../../runtime/core/app-definition.ts';
import { analyseApp } from '../../plugin/analyse/app-model.ts';
import { buildServer, buildWeb } from '../build/build.ts';
import { runChecks } from '../check/check.ts';
import { typecheckOnce } from '../dev/typecheck-once.ts';
import { type SeverityDiagnostic, toFailureDiagnostics, type VerifyDiagnostic } from '../../plugin/analyse/failure-diagnostics.ts';
import { keepingGenerated } from '../../plugin/generate/build-generation.ts';
import { generateFromApp } from '../../plugin/generate/generate.ts';
import { driftHint, summariseDrift } from '../../plugin/generate/sync-files.ts';
import { loadAppOnce } from '../../plugin/load-app-once.ts';
import { AppLoadError } from '../../plugin/app-load-error.ts';
import { structuralFindings } from '../ai/redteam/structural.ts';
import { planAppTests, runAppTests } from '../test/test-run.ts';
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

export type { VerifyDiagnostic } from '../../plugin/analyse/failure-diagnostics.ts';

export interface GateResult {
  name: GateName;
  /** `failed` when a diagnostic is an error; `skipped` says why in `reason`. */
  status: 'passed' | 'failed' | 'skipped';
  durationMs: number;
  /** What the gate ran, as command lines (with the project, config or database they used); empty when it ran nothing. */
  ran: string[];
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

type GateOutcome = ({ diagnostics: VerifyDiagnostic[] } | { skipped: string; diagnostics?: VerifyDiagnostic[] }) & { ran?: string[] };

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
  {
    name: 'migrations',
    level: 'strict',
    run: async (ctx) => (ctx.app ? { ran: ['fw db status: the plan from src/fw/schema.ts against the app database'], diagnostics: await checkMigrations(ctx.root, ctx.app) } : appDoesNotLoad),
  },
  {
    name: 'boot',
    level: 'smoke',
    run: async (ctx) => (ctx.app ? { ran: ['fw dev --once: the runtime on a free port, then GET /health'], diagnostics: await probeBoot(ctx.root, ctx.app) } : appDoesNotLoad),
  },
  { name: 'tests', level: 'standard', run: testsGate },
  { name: 'redteam', level: 'strict', run: redteamGate },
  { name: 'web-build', level: 'strict', run: webBuildGate },
  { name: 'backend-build', level: 'strict', run: backendBuildGate },
];

export interface VerifyOptions {
  root: string;
  level: VerifyLevel;
  /** Called as each gate starts, so a terminal can show what is running (a gate can take seconds). */
  onGateStart?: (name: GateName) => void;
  /** Called with each gate's result as soon as it is known, in order (the report lists them again). */
  onGate?: (gate: GateResult) => void;
}

/**
 * `fw verify`: runs the gates of `level` in order and reports every one; a failed gate does not stop
 * the rest. Writes nothing to the app's sources (drift is reported, not regenerated); the boot applies
 * additive migrations to the app database as `fw dev` would.
 *
 * @example
 *   const report = await verify({ root: '.', level: 'standard' });
 *   report.gates.filter((g) => g.status === 'failed').map((g) => g.name) // e.g. ['typecheck']
 */
export async function verify(options: VerifyOptions): Promise<VerifyReport> {
  const started = performance.now();
  const root = path.resolve(options.root);
  const ctx: VerifyContext = { root, app: undefined, web: webLayout(root) };
  const results: GateResult[] = [];
  const rank = levels.indexOf(options.level);
  for (const gate of gates) {
    if (levels.indexOf(gate.level) > rank) continue;
    options.onGateStart?.(gate.name);
    const gateStarted = performance.now();
    let outcome: GateOutcome;
    try {
      outcome = await gate.run(ctx);
    } catch (error) {
      outcome = { diagnostics: toFailureDiagnostics(error) };
    }
    const durationMs = Math.round(performance.now() - gateStarted);
    const ran = outcome.ran ?? [];
    if ('skipped' in outcome) results.push({ name: gate.name, status: 'skipped', durationMs, ran, diagnostics: outcome.diagnostics ?? [], reason: outcome.skipped });
    else {
      const failed = outcome.diagnostics.some((d) => d.severity === 'error');
      results.push({ name: gate.name, status: failed ? 'failed' : 'passed', durationMs, ran, diagnostics: outcome.diagnostics });
    }
    options.onGate?.(results.at(-1)!);
  }
  return { ok: results.every((g) => g.status !== 'failed'), level: options.level, gates: results, durationMs: Math.round(performance.now() - started) };
}

/** `fw generate --check`; it also loads the app for the gates that need it. */
async function generatedGate(ctx: VerifyContext): Promise<GateOutcome> {
  const ran = ['fw generate --check'];
  try {
    ctx.app = await loadAppOnce(ctx.root);
  } catch (error) {
    if (!(error instanceof AppLoadError)) throw error;
    return { ran, diagnostics: toFailureDiagnostics(error).map((d) => ({ ...d, hint: 'Fix the file named; generation needs an app that loads.', suggestedCommand: 'fw check --json' })) };
  }
  const generated = await generateFromApp(ctx.app, { root: ctx.root, check: true });
  const drifted = summariseDrift(generated.files);
  return {
    ran,
    diagnostics: drifted === null ? [] : [{ path: drifted.file, code: 'generated_drift', severity: 'error', message: drifted.message, hint: driftHint, suggestedCommand: 'fw generate' }],
  };
}

/**
 * `fw check` without its drift findings (the generated gate reports those) and without its types: the
 * typecheck gate runs the same check, so tsc runs once and each gate's time is its own.
 */
async function checkGate(ctx: VerifyContext): Promise<GateOutcome> {
  const report = await runChecks({ root: ctx.root, typecheck: false });
  return { ran: ['fw check --no-typecheck'], diagnostics: report.diagnostics.filter((d) => d.code !== 'generated_drift') };
}

/**
 * The app's own TypeScript over `tsconfig.json` and, for a Vite `web/`, `web/tsconfig.json`: the
 * typecheck `fw check` and `fw dev` run (typecheck-once.ts), lending fw's TypeScript to an app without one.
 */
async function typecheckGate(ctx: VerifyContext): Promise<GateOutcome> {
  const result = await typecheckOnce({ root: ctx.root, fallbackToFw: true });
  if (!result.ran) return { skipped: result.kind === 'no_tsconfig' ? 'No tsconfig.json in the app.' : 'TypeScript is installed neither in the app nor with fw (npm install -D typescript).' };
  const { version, from } = result.typescript;
  const diagnostics: VerifyDiagnostic[] = [];
  if (from === 'fw') diagnostics.push({ path: 'package.json', code: 'typescript_from_fw', severity: 'info', message: `The app has no typescript; used fw's (${version}).` });
  if (ctx.web === 'nuxt') diagnostics.push({ path: 'web/', code: 'web_typecheck_not_run', severity: 'info', message: 'web/ is a Nuxt app: its .vue files need `nuxt typecheck web` (vue-tsc), which fw verify does not run yet.' });
  for (const d of result.diagnostics) {
    diagnostics.push({
      path: d.line === undefined ? d.file : `${d.file}:${d.line}:${d.column ?? 1}`,
      code: d.code ? `TS${d.code}` : 'typecheck_failed',
      severity: 'error',
      message: d.message,
    });
  }
  const ran = result.projects.map((project) => `tsc -p ${project} --noEmit (typescript ${version}, ${from === 'app' ? "the app's" : "fw's"}; in a worker thread, as fw check runs it)`);
  return { ran, diagnostics };
}

/** `vitest run` in the app through fw's reporter, so the run is recorded for `fw repair diagnose`. */
async function testsGate(ctx: VerifyContext): Promise<GateOutcome> {
  const plan = await planAppTests(ctx.root);
  if (!plan.run) return { skipped: plan.reason };
  const ran = [`vitest run --reporter=default --reporter=fwjs/test-reporter (vitest ${plan.vitest.version}; what fw test runs)`];
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
  return { ran, diagnostics };
}

/** `fw ai redteam`'s structural pass: failing findings are errors, the rest warnings. */
async function redteamGate(ctx: VerifyContext): Promise<GateOutcome> {
  if (!ctx.app) return appDoesNotLoad;
  const findings = structuralFindings(await analyseApp(ctx.root, ctx.app));
  return {
    ran: ['fw ai redteam (the structural pass)'],
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

/**
 * The web half of `fw build` (`vite build` of web/ with its vite.config), into a scratch directory
 * under `.fw/verify/` that is removed afterwards: the app's own `.fw/build` and `web/dist` are left alone.
 */
async function webBuildGate(ctx: VerifyContext): Promise<GateOutcome> {
  if (ctx.web === 'none') return { skipped: 'The app has no web/.' };
  if (ctx.web === 'nuxt') return { skipped: 'web/ is a Nuxt app; it builds with `nuxt build web`, which fw verify does not run yet (fw build does not either).' };
  return inScratchDir(ctx, 'web', async (outDir) => {
    const ran = [`vite build web --outDir ${toPosix(path.relative(ctx.root, outDir))} (fw build's web step)`];
    try {
      const notes: string[] = [];
      // The fw plugin's regeneration off: verify writes nothing to src/fw/_generated/.
      const built = await keepingGenerated(() => buildWeb(ctx.root, outDir, notes));
      return built ? { ran, diagnostics: [] } : { skipped: notes.join(' ') || 'Nothing to build in web/.' };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { ran, diagnostics: [{ path: 'web/', code: 'web_build_failed', severity: 'error', message: excerpt(message), suggestedCommand: 'fw build' }] };
    }
  });
}

/**
 * The backend half of `fw build`: src/ bundled into one module and loaded on plain Node, as `fw start`
 * runs it (so Vite-only code that `fw dev` tolerates fails here), in a scratch directory as above.
 */
async function backendBuildGate(ctx: VerifyContext): Promise<GateOutcome> {
  return inScratchDir(ctx, 'server', async (outDir) => {
    const bundle = toPosix(path.relative(ctx.root, path.join(outDir, 'app.mjs')));
    const ran = [`fw build's server step: bundle src/ into ${bundle}, then load it on plain Node`];
    try {
      const built = await buildServer(ctx.root, outDir);
      return { ran, diagnostics: [{ path: bundle, code: 'backend_build', severity: 'info', message: `Bundled and loaded ${built.entries.length} entries.` }] };
    } catch (error) {
      return { ran, diagnostics: toFailureDiagnostics(error).map((d) => ({ ...d, suggestedCommand: 'fw build --json' })) };
    }
  });
}

/** Runs `fn` with a fresh `.fw/verify/<random>/<name>` directory, removed afterwards with `.fw/verify/` when empty. */
async function inScratchDir<T>(ctx: VerifyContext, name: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const verifyDir = path.join(ctx.root, '.fw', 'verify');
  // A fresh name per run: a bundle is imported by its URL, which Node caches for the process.
  const runDir = path.join(verifyDir, randomBytes(4).toString('hex'));
  try {
    return await fn(path.join(runDir, name));
  } finally {
    await rm(runDir, { recursive: true, force: true });
    await rmdir(verifyDir).catch(() => undefined);
  }
}

function toPosix(file: string): string {
  return file.split(path.sep).join('/');
}

function webLayout(root: string): VerifyContext['web'] {
  if (!existsSync(path.join(root, 'web'))) return 'none';
  return ['nuxt.config.ts', 'nuxt.config.js', 'nuxt.config.mjs'].some((f) => existsSync(path.join(root, 'web', f))) ? 'nuxt' : 'vite';
}

/** The first lines of a tool’s output, enough to act on. */
function excerpt(output: string, lines = 15): string {
  return output.trim().split('\n').slice(0, lines).join('\n');
}
