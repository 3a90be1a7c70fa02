import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { FwFailure } from '../../runtime/core/failure.ts';
import { fwPackageRoot } from '../../plugin/package-root.ts';
import { fwVersion } from '../../runtime/core/version.ts';
import { lockFile, lockForApp } from './template-lock.ts';

export const templateNames = ['minimal-web', 'nuxt-web', 'b2b-support-web'] as const;
export type TemplateName = (typeof templateNames)[number];

export interface CreateAppOptions {
  dir: string;
  template: string;
  /** npm spec for the `fwjs` dependency; default: this fw (its version from the registry when installed, else a `file:` link to the checkout). */
  fwSpec?: string;
  install?: boolean;
  packageManager?: 'npm' | 'pnpm';
  /**
   * Told when the install starts (with its command, e.g. `npm install`); what it returns gets each line
   * the install prints (stdout and stderr) and its end. Default: the lines go to stderr as they come.
   */
  reportInstall?: (command: string) => InstallReport;
}

export interface InstallReport {
  line(text: string): void;
  end(ok: boolean): void;
}

export interface CreatedApp {
  dir: string;
  template: TemplateName;
  fwSpec: string;
  installed: boolean;
  files: string[];
}

/** Copies a template into a new directory and fills in its name and fw dependency. */
export async function createApp(options: CreateAppOptions): Promise<CreatedApp> {
  const dir = path.resolve(options.dir);
  if (!(templateNames as readonly string[]).includes(options.template)) {
    throw new FwFailure('unknown_template', `Unknown template "${options.template}".`, {
      suggestions: templateNames.map((t) => `fw create ${options.dir} --template ${t}`),
    });
  }
  if (existsSync(dir) && (await readdir(dir)).length > 0) {
    throw new FwFailure('dir_not_empty', `${dir} exists and is not empty; fw create never overwrites files.`, {
      suggestions: [`fw create ${path.basename(dir)}-2 --template ${options.template}`],
    });
  }
  const source = path.join(fwPackageRoot(), 'templates', options.template);
  // Judged by the path inside the template: an installed fw's templates are themselves under node_modules/.
  await cp(source, dir, { recursive: true, filter: (src) => !/(^|[\\/])(node_modules|\.fw|dist)([\\/]|$)/.test(path.relative(source, src)) });
  // npm leaves .gitignore and .npmrc out of published packages, so templates ship them as _gitignore
  // and _npmrc (.npmrc: npm on an older Node quiet about engines, templates/*/_npmrc).
  for (const name of ['gitignore', 'npmrc']) {
    if (existsSync(path.join(dir, `_${name}`))) await rename(path.join(dir, `_${name}`), path.join(dir, `.${name}`));
  }

  const fwSpec = options.fwSpec ?? defaultFwSpec();
  const pkgFile = path.join(dir, 'package.json');
  const pkg = JSON.parse(await readFile(pkgFile, 'utf8')) as Record<string, any>;
  pkg.name = path.basename(dir).toLowerCase().replace(/[^a-z0-9-_.]/g, '-');
  pkg.dependencies = { ...pkg.dependencies, fwjs: fwSpec };
  // A linked checkout is already built: its `prepare` (the build) is not for the app to run, and
  // npm's allowScripts review would otherwise warn about it on every install.
  // npm names a linked folder by its path relative to the app (what `npm install-scripts deny` writes).
  if (fwSpec.startsWith('file:') && !fwSpec.endsWith('.tgz')) {
    const linked = path.relative(dir, path.resolve(dir, fwSpec.slice('file:'.length))).split(path.sep).join('/');
    pkg.allowScripts = { ...pkg.allowScripts, [`file:${linked}`]: false };
  }
  await writeFile(pkgFile, `${JSON.stringify(pkg, null, 2)}\n`);
  // The tree the suite tested (template-lock.ts), with this app's name and fwjs.
  const lock = path.join(dir, lockFile);
  if (existsSync(lock)) await writeFile(lock, `${JSON.stringify(lockForApp(JSON.parse(await readFile(lock, 'utf8')), { name: pkg.name, fwSpec }), null, 2)}\n`);

  if (options.install) await run(options.packageManager ?? 'npm', ['install'], dir, options.reportInstall);
  return { dir, template: options.template as TemplateName, fwSpec, installed: Boolean(options.install), files: await listFiles(dir) };
}

/**
 * The `fwjs` dependency of a new app: this fw's own version when it runs installed (from the registry,
 * e.g. under `npm create fwjs`, whose copy lives in a cache the app must not link to); a `file:` link
 * when it runs from a checkout, whose version may not be published.
 */
function defaultFwSpec(): string {
  const root = fwPackageRoot();
  return root.split(path.sep).includes('node_modules') ? `^${fwVersion}` : `file:${root}`;
}

async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of (await readdir(path.join(dir, prefix), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name === 'node_modules') continue;
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await listFiles(dir, rel)));
    else out.push(rel);
  }
  return out;
}

const printLines = (): InstallReport => ({ line: (text) => void process.stderr.write(`${text}\n`), end: () => undefined });

function run(command: string, args: string[], cwd: string, reportInstall: (command: string) => InstallReport = printLines): Promise<void> {
  return new Promise((resolve, reject) => {
    const report = reportInstall(`${command} ${args.join(' ')}`);
    // Install output is progress, not a result: it never reaches stdout (kept clean for --json). Both
    // streams are read line by line, so a status line can stay below them.
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], shell: process.platform === 'win32' });
    for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on('line', (line) => report.line(line));
    child.on('error', (error) => {
      report.end(false);
      reject(error);
    });
    child.on('close', (code) => {
      report.end(code === 0);
      if (code === 0) resolve();
      else reject(new FwFailure('install_failed', `${command} ${args.join(' ')} exited with ${code} in ${cwd}.`, { suggestions: [`cd ${cwd} && ${command} install`] }));
    });
  });
}
