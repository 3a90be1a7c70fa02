import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { probeApp, type ProbeResult } from './probes.ts';
import { runStep, type StepCommand, type StepResult, startServer } from './steps.ts';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const fieldTemplates = ['minimal-web', 'nuxt-web', 'b2b-support-web'] as const;
export const packageManagers = ['npm', 'pnpm'] as const;

export interface FieldTestOptions {
  templates: string[];
  packageManagers: string[];
  /** The fw dependency of the apps; default: this checkout, packed with `npm pack`. */
  fwSpec?: string;
  install: boolean;
  runtimeProbes: boolean;
  keep: boolean;
  dryRun: boolean;
  /** Per-step timeouts (ms) by step name, over the defaults. */
  timeouts?: Partial<Record<string, number>>;
}

/** One template × package manager. */
export interface FieldResult {
  template: string;
  packageManager: string;
  ok: boolean;
  /** The step that failed, when one did. */
  failedStep: string | null;
  /** Present with `--keep`. */
  appDir?: string;
  steps: StepResult[];
  runtime?: { serverUrl: string | null };
  probes: ProbeResult[];
}

export interface FieldReport {
  schema: 'fw.field-test-report.v1';
  ok: boolean;
  dryRun: boolean;
  fwSpec: string;
  node: string;
  /** With `--dry-run`: the steps each result would run, in order. */
  plan?: Array<{ template: string; packageManager: string; steps: string[] }>;
  results: FieldResult[];
}

const defaultTimeouts: Record<string, number> = {
  pack: 180_000,
  'install-pnpm': 180_000,
  create: 60_000,
  install: 600_000,
  generate: 180_000,
  'dev-once': 180_000,
  'verify-smoke': 300_000,
  'start-server': 90_000,
};

/** The steps of one result, by name, in the order they run. */
export function planSteps(options: Pick<FieldTestOptions, 'install' | 'runtimeProbes'>, packageManager = 'npm'): string[] {
  const install = options.install || options.runtimeProbes;
  return [
    // pnpm's bootstrap (found on PATH, or installed into the work directory), shared by the pnpm results.
    ...(install && packageManager === 'pnpm' ? ['install-pnpm'] : []),
    'create',
    ...(install ? ['install'] : []),
    ...(options.runtimeProbes ? ['generate', 'dev-once', 'verify-smoke', 'start-server', 'probe-health', 'probe-entries', 'probe-command', 'probe-query'] : []),
  ];
}

/**
 * The field test: fresh apps made from the templates with fw as a user gets it (the packed
 * checkout), installed with each package manager, then — with runtime probes — generated, checked,
 * verified, served and called over real HTTP. Every step has a timeout; a failing step ends its
 * result and the report says which and shows its output.
 */
export async function runFieldTest(options: FieldTestOptions): Promise<FieldReport> {
  const unknownTemplates = options.templates.filter((t) => !(fieldTemplates as readonly string[]).includes(t));
  const unknownManagers = options.packageManagers.filter((p) => !(packageManagers as readonly string[]).includes(p));
  if (unknownTemplates.length > 0 || unknownManagers.length > 0) {
    throw new Error(`Unknown ${unknownTemplates.length > 0 ? `template(s) ${unknownTemplates.join(', ')} (known: ${fieldTemplates.join(', ')})` : `package manager(s) ${unknownManagers.join(', ')} (known: ${packageManagers.join(', ')})`}.`);
  }
  const base = { schema: 'fw.field-test-report.v1' as const, node: process.versions.node };
  if (options.dryRun) {
    return {
      ...base,
      ok: true,
      dryRun: true,
      fwSpec: options.fwSpec ?? 'file:<npm pack of this checkout>',
      plan: options.templates.flatMap((template) => options.packageManagers.map((packageManager) => ({ template, packageManager, steps: planSteps(options, packageManager) }))),
      results: [],
    };
  }
  const timeout = (name: string) => options.timeouts?.[name] ?? defaultTimeouts[name] ?? 60_000;
  const work = await mkdtemp(path.join(tmpdir(), 'fw-field-'));
  const results: FieldResult[] = [];
  let fwSpec = options.fwSpec;
  try {
    // Shared preparation: the package (in every result), and pnpm when it is asked for (in the pnpm results).
    const shared: StepResult[] = [];
    if (fwSpec === undefined) {
      const packDir = path.join(work, 'pack');
      await mkdir(packDir);
      const pack = await runStep({ name: 'pack', argv: ['npm', 'pack', '--pack-destination', packDir, '--silent'], cwd: repoRoot, timeoutMs: timeout('pack') });
      shared.push(pack);
      const tarball = readdirSync(packDir).find((f) => f.endsWith('.tgz'));
      if (!pack.ok || !tarball) {
        return { ...base, ok: false, dryRun: false, fwSpec: '(npm pack failed)', results: failedEverywhere(options, shared, 'pack') };
      }
      fwSpec = `file:${path.join(packDir, tarball)}`;
    }
    const pnpm = options.packageManagers.includes('pnpm') && (options.install || options.runtimeProbes) ? await ensurePnpm(work, timeout('install-pnpm')) : undefined;

    for (const template of options.templates) {
      for (const packageManager of options.packageManagers) {
        const appDir = path.join(work, `${template}-${packageManager}`);
        const result = await runOne({ template, packageManager, appDir, fwSpec, options, timeout, shared, pnpm });
        results.push(result);
        if (!options.keep) await rm(appDir, { recursive: true, force: true }).catch(() => undefined);
      }
    }
    return { ...base, ok: results.every((r) => r.ok), dryRun: false, fwSpec, results };
  } finally {
    if (!options.keep) await rm(work, { recursive: true, force: true }).catch(() => undefined);
  }
}

interface RunOneContext {
  template: string;
  packageManager: string;
  appDir: string;
  fwSpec: string;
  options: FieldTestOptions;
  timeout: (name: string) => number;
  shared: StepResult[];
  pnpm: { ok: boolean; bin: string; step: StepResult } | undefined;
}

async function runOne(context: RunOneContext): Promise<FieldResult> {
  const { template, packageManager, appDir, fwSpec, options, timeout } = context;
  const result: FieldResult = { template, packageManager, ok: false, failedStep: null, ...(options.keep ? { appDir } : {}), steps: [...context.shared], probes: [] };
  const fail = (step: string) => {
    result.failedStep = step;
    return result;
  };
  if (context.shared.some((s) => !s.ok)) return fail(context.shared.find((s) => !s.ok)!.name);
  // The pnpm bootstrap is part of every pnpm result, passed or failed, so the report shows how pnpm came to be.
  if (packageManager === 'pnpm' && context.pnpm) {
    result.steps.push(context.pnpm.step);
    if (!context.pnpm.ok) return fail(context.pnpm.step.name);
  }
  const node = process.execPath;
  // The app's own fw, as installed; before install, this checkout's CLI creates the app.
  const appFw = (args: string[]): readonly string[] => [node, path.join(appDir, 'node_modules', 'fwjs', 'dist', 'cli', 'bin.js'), ...args];
  const step = async (command: StepCommand) => {
    const done = await runStep(command);
    result.steps.push(done);
    return done.ok;
  };

  const created = await step({
    name: 'create',
    argv: [node, path.join(repoRoot, 'dist', 'cli', 'bin.js'), 'create', appDir, '--template', template, '--fw-spec', fwSpec, '--json'],
    cwd: path.dirname(appDir),
    timeoutMs: timeout('create'),
  });
  if (!created) return fail('create');
  if (options.install || options.runtimeProbes) {
    const installArgv = packageManager === 'pnpm' ? [context.pnpm!.bin, 'install', '--reporter=append-only'] : ['npm', 'install', '--no-audit', '--no-fund'];
    if (!(await step({ name: 'install', argv: installArgv, cwd: appDir, timeoutMs: timeout('install') }))) return fail('install');
    if (!existsSync(path.join(appDir, 'node_modules', 'fwjs', 'dist', 'cli', 'bin.js'))) {
      result.steps.at(-1)!.ok = false;
      result.steps.at(-1)!.stderr += '\nfw is not installed in node_modules/fwjs after the install.';
      return fail('install');
    }
  }
  if (!options.runtimeProbes) {
    result.ok = true;
    return result;
  }
  if (!(await step({ name: 'generate', argv: appFw(['generate', '--json']), cwd: appDir, timeoutMs: timeout('generate') }))) return fail('generate');
  if (!(await step({ name: 'dev-once', argv: appFw(['dev', '--once', '--json']), cwd: appDir, timeoutMs: timeout('dev-once') }))) return fail('dev-once');
  if (!(await step({ name: 'verify-smoke', argv: appFw(['verify', '--smoke', '--json']), cwd: appDir, timeoutMs: timeout('verify-smoke') }))) return fail('verify-smoke');

  const server = await startServer({ name: 'start-server', argv: appFw(['dev', '--api-only', '--port', '0', '--json']), cwd: appDir, timeoutMs: timeout('start-server') });
  result.steps.push(server.step);
  try {
    const serverUrl = typeof server.ready?.serverUrl === 'string' ? server.ready.serverUrl : null;
    result.runtime = { serverUrl };
    if (!server.step.ok || !serverUrl) return fail('start-server');
    result.probes = await probeApp(serverUrl, template);
    const failed = result.probes.find((p) => !p.ok);
    if (failed) return fail(`probe-${failed.name}`);
    result.ok = true;
    return result;
  } finally {
    await server.stop();
  }
}

/**
 * pnpm from PATH, or installed from the npm registry into the work directory (nothing global). Either
 * way the step is `install-pnpm`: `pnpm --version` when PATH has it, else the `npm install`.
 */
async function ensurePnpm(work: string, timeoutMs: number): Promise<{ ok: boolean; bin: string; step: StepResult }> {
  const found = await runStep({ name: 'install-pnpm', argv: ['pnpm', '--version'], cwd: work, timeoutMs: 20_000 });
  if (found.ok) return { ok: true, bin: 'pnpm', step: found };
  const prefix = path.join(work, 'tools');
  await mkdir(prefix, { recursive: true });
  const installed = await runStep({ name: 'install-pnpm', argv: ['npm', 'install', '--prefix', prefix, '--no-audit', '--no-fund', 'pnpm@10'], cwd: work, timeoutMs });
  return { ok: installed.ok, bin: path.join(prefix, 'node_modules', '.bin', 'pnpm'), step: installed };
}

function failedEverywhere(options: FieldTestOptions, shared: StepResult[], step: string): FieldResult[] {
  return options.templates.flatMap((template) => options.packageManagers.map((packageManager) => ({ template, packageManager, ok: false, failedStep: step, steps: shared, probes: [] })));
}

/** Writes the report (pretty JSON) where `--write-report` says. */
export async function writeReport(file: string, report: FieldReport): Promise<void> {
  await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
}
