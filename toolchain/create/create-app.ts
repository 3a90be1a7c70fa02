import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { FwFailure } from '../../runtime/core/failure.ts';
import { fwPackageRoot } from '../../plugin/package-root.ts';
import { defaultFwSpec } from './fw-spec.ts';
import { lockFile, lockForApp } from './template-lock.ts';

export const templateNames = ['minimal-web', 'nuxt-web', 'b2b-support-web'] as const;
export type TemplateName = (typeof templateNames)[number];

export interface CreateAppOptions {
  dir: string;
  template: string;
  /** npm spec for the `fwjs` dependency; default: where this fw came from (fw-spec.ts: a checkout or tarball as `file:`, else the registry's version). */
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
  const existed = existsSync(dir);
  if (existed && (await readdir(dir)).length > 0) {
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

  if (options.install) {
    try {
      await run(options.packageManager ?? 'npm', ['install'], dir, options.reportInstall);
    } catch (error) {
      // No half-made app: what fw create wrote goes (a folder that was there, empty, stays), and the
      // failure says so, with the install's own error above it.
      await removeCreated(dir, existed);
      if (!(error instanceof FwFailure)) throw error;
      throw new FwFailure(error.kind, `${error.message} fw create removed what it had written in ${dir}; nothing is left half-made.`, {
        suggestions: [
          'Fix what npm said above (a network error: run again once online; a fwjs spec that does not install: --fw-spec with a tarball, a checkout or a published version), then run the same fw create again.',
          `fw create ${options.dir} --template ${options.template}${options.fwSpec ? ` --fw-spec ${options.fwSpec}` : ''} without --install, then cd ${options.dir} && npm install, to keep the app and install it yourself.`,
        ],
      });
    }
  }
  return { dir, template: options.template as TemplateName, fwSpec, installed: Boolean(options.install), files: await listFiles(dir) };
}

/** Takes back what fw create wrote: the folder it made, or everything in the empty folder it was given. */
async function removeCreated(dir: string, existed: boolean): Promise<void> {
  if (!existed) return rm(dir, { recursive: true, force: true });
  for (const entry of await readdir(dir)) await rm(path.join(dir, entry), { recursive: true, force: true });
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
