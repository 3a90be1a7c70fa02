import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { templateNames } from '../../toolchain/create/create-app.ts';
import { lockFile, lockForTemplate } from '../../toolchain/create/template-lock.ts';
import { repoRoot } from '../support/app.ts';
import { runStep, type StepResult } from '../field-test/steps.ts';

/**
 * `npm run templates:latest`: each template as its ranges resolve today, instead of the tree its lock
 * pins (toolchain/create/template-lock.ts). A fresh app is made from this checkout packed (as a user gets
 * fw), its lock removed, installed, then typechecked, built and tested with its own scripts. The report
 * says which template broke at which step and which packages differ from the pinned tree, so an upstream
 * release that breaks an app is found here, by hand, not by the suite or a user. With `write`, a template
 * that passed gets the tree it passed with as its lock; `hold` keeps named packages at a version (one
 * that broke the latest) while the rest moves on.
 */
export interface LatestOptions {
  templates: string[];
  /** Writes the lock of each template that passed into templates/<name>/package-lock.json. */
  write: boolean;
  /** `name@version`s installed over the fresh resolution, in each template whose tree has that package. */
  holds: string[];
  keep: boolean;
  /** Told as each step ends (the run takes minutes per template). */
  onStep?: (template: string | undefined, step: StepResult) => void;
}

export interface LatestResult {
  template: string;
  ok: boolean;
  /** The first step that failed. */
  failedStep: string | null;
  steps: StepResult[];
  /** Packages whose versions differ between the pinned lock and today's resolution, by name. */
  changed: Array<{ name: string; pinned: string[]; latest: string[] }>;
  /** What became of templates/<name>/package-lock.json. */
  lock: 'written' | 'unchanged' | 'kept';
  appDir?: string;
}

export interface LatestReport {
  ok: boolean;
  fwSpec: string;
  node: string;
  holds: string[];
  results: LatestResult[];
}

/** The checks after the install, each an npm script every template has. */
const checks = ['typecheck', 'build', 'test'] as const;
const timeouts: Record<string, number> = { pack: 300_000, create: 60_000, install: 600_000, hold: 600_000, typecheck: 300_000, build: 300_000, test: 300_000 };

export async function tryLatest(options: LatestOptions): Promise<LatestReport> {
  const unknown = options.templates.filter((t) => !(templateNames as readonly string[]).includes(t));
  if (unknown.length > 0) throw new Error(`Unknown template(s) ${unknown.join(', ')} (known: ${templateNames.join(', ')}).`);
  const unversioned = options.holds.filter((hold) => hold.lastIndexOf('@') <= 0);
  if (unversioned.length > 0) throw new Error(`A hold names a version: ${unversioned.map((hold) => `${hold}@<version>`).join(', ')}.`);
  const work = await mkdtemp(path.join(tmpdir(), 'fw-latest-'));
  const base = { node: process.versions.node, holds: options.holds };
  try {
    // As users get fw: packed (npm pack builds dist/ through `prepare`); its own ranges resolve afresh too.
    const packDir = path.join(work, 'pack');
    await mkdir(packDir);
    const pack = await runStep({ name: 'pack', argv: ['npm', 'pack', '--pack-destination', packDir, '--silent'], cwd: repoRoot, timeoutMs: timeouts.pack! });
    options.onStep?.(undefined, pack);
    const tarball = readdirSync(packDir).find((f) => f.endsWith('.tgz'));
    if (!pack.ok || !tarball) {
      const results = options.templates.map((template): LatestResult => ({ template, ok: false, failedStep: 'pack', steps: [pack], changed: [], lock: 'kept' }));
      return { ...base, ok: false, fwSpec: '(npm pack failed)', results };
    }
    const fwSpec = `file:${path.join(packDir, tarball)}`;
    const results: LatestResult[] = [];
    for (const template of options.templates) results.push(await tryTemplate(template, path.join(work, template), fwSpec, options));
    return { ...base, ok: results.every((r) => r.ok), fwSpec, results };
  } finally {
    if (!options.keep) await rm(work, { recursive: true, force: true }).catch(() => undefined);
  }
}

async function tryTemplate(template: string, appDir: string, fwSpec: string, options: LatestOptions): Promise<LatestResult> {
  const result: LatestResult = { template, ok: false, failedStep: null, steps: [], changed: [], lock: 'kept', ...(options.keep ? { appDir } : {}) };
  const step = async (name: string, argv: string[], cwd = appDir) => {
    const done = await runStep({ name, argv, cwd, timeoutMs: timeouts[name]! });
    options.onStep?.(template, done);
    result.steps.push(done);
    if (!done.ok) result.failedStep ??= name;
    return done.ok;
  };
  const templateLock = path.join(repoRoot, 'templates', template, lockFile);
  if (!(await step('create', [process.execPath, path.join(repoRoot, 'dist/cli/bin.js'), 'create', appDir, '--template', template, '--fw-spec', fwSpec, '--json'], path.dirname(appDir)))) return result;
  // Without the pinned lock: every range resolves to the newest version it allows.
  await rm(path.join(appDir, lockFile), { force: true });
  if (!(await step('install', ['npm', 'install', '--no-audit', '--no-fund']))) return result;
  // A held package is installed at its version as a dependency of the app: npm dedupes the tree onto it
  // (it satisfies the ranges that asked for it), and the lock written below goes back to the template's ranges.
  const installed = Object.keys(JSON.parse(await readFile(path.join(appDir, lockFile), 'utf8')).packages ?? {});
  const holds = options.holds.filter((hold) => installed.some((location) => location.endsWith(`node_modules/${hold.slice(0, hold.lastIndexOf('@'))}`)));
  if (holds.length > 0 && !(await step('hold', ['npm', 'install', '--no-audit', '--no-fund', ...holds]))) return result;
  const latest = JSON.parse(await readFile(path.join(appDir, lockFile), 'utf8'));
  const pinned = existsSync(templateLock) ? JSON.parse(await readFile(templateLock, 'utf8')) : { packages: {} };
  result.changed = changedPackages(pinned, latest);
  // Each check runs whatever the others did: a failed build says nothing about the tests.
  for (const check of checks) await step(check, ['npm', 'run', check]);
  if (result.failedStep) return result;
  result.ok = true;
  if (result.changed.length === 0) result.lock = 'unchanged';
  else if (options.write) {
    const pkg = JSON.parse(await readFile(path.join(repoRoot, 'templates', template, 'package.json'), 'utf8'));
    await writeFile(templateLock, `${JSON.stringify(lockForTemplate(latest, pkg), null, 2)}\n`);
    result.lock = 'written';
  }
  return result;
}

type Lock = { packages?: Record<string, { version?: string } & Record<string, unknown>> };

/** Each package (fwjs aside) whose set of installed versions differs between two locks. */
export function changedPackages(pinned: Lock, latest: Lock): LatestResult['changed'] {
  const versions = (lock: Lock) => {
    const byName = new Map<string, Set<string>>();
    for (const [location, entry] of Object.entries(lock.packages ?? {})) {
      const name = location.split('node_modules/').at(-1)!;
      if (!location.includes('node_modules/') || name === 'fwjs' || location.includes('node_modules/fwjs/') || !entry.version) continue;
      byName.set(name, (byName.get(name) ?? new Set()).add(entry.version));
    }
    return byName;
  };
  const before = versions(pinned);
  const after = versions(latest);
  const sorted = (set: Set<string> | undefined) => [...(set ?? [])].sort();
  return [...new Set([...before.keys(), ...after.keys()])]
    .sort()
    .map((name) => ({ name, pinned: sorted(before.get(name)), latest: sorted(after.get(name)) }))
    .filter((p) => p.pinned.join() !== p.latest.join());
}
