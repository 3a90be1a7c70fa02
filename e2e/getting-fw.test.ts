import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unsupportedNodeMessage } from '../runtime/core/node-version.ts';
import { templateNames } from '../toolchain/create/create-app.ts';
import { repoRoot, runNode } from './support/app.ts';
import { unpinnedPackages } from './support/template-pins.ts';

const run = promisify(execFile);
const npm = (args: string[], cwd: string) => run('npm', args, { cwd, maxBuffer: 16 * 1024 * 1024 });
/** An .npmrc's settings, without comments and blank lines. */
const settingsOf = (npmrc: string) => npmrc.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));

/**
 * Getting fw as a user does (#30.2): the published tarballs (`npm pack`), `npm create fwjs my-app` in a
 * directory outside this checkout. Offline and fast: the tarballs are unpacked into a node_modules
 * whose other packages link to this checkout's (what `npm install <tarball>` gives, without the
 * registry); `e2e` does not run the full registry install — docs/getting-started.md does, by hand.
 */
describe('npm create fwjs, from the packed tarballs', () => {
  let work: string;
  let fwTarball: string;
  let createTarball: string;

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'fw-getting-'));
    const packs = path.join(work, 'packs');
    await mkdir(packs);
    // --ignore-scripts: `prepare` (the build) ran in the global setup already.
    for (const dir of [repoRoot, path.join(repoRoot, 'packages/create-fwjs')]) await npm(['pack', '--ignore-scripts', '--pack-destination', packs, '--silent'], dir);
    const files = await readdir(packs);
    fwTarball = path.join(packs, files.find((f) => f.startsWith('fwjs-'))!);
    createTarball = path.join(packs, files.find((f) => f.startsWith('create-fwjs-'))!);

    // "npm install" of both tarballs: unpacked, their dependencies linked from this checkout.
    const modules = path.join(work, 'tools/node_modules');
    await mkdir(modules, { recursive: true });
    for (const [tarball, name] of [[fwTarball, 'fwjs'], [createTarball, 'create-fwjs']] as const) {
      await mkdir(path.join(modules, name));
      await run('tar', ['-xzf', tarball, '-C', path.join(modules, name), '--strip-components=1']);
    }
    for (const entry of await readdir(path.join(repoRoot, 'node_modules'))) {
      if (entry.startsWith('.') || entry === 'fwjs' || entry === 'create-fwjs') continue;
      await symlink(path.join(repoRoot, 'node_modules', entry), path.join(modules, entry));
    }
  }, 120_000);
  afterAll(() => rm(work, { recursive: true, force: true }));

  it('packs fwjs (the fw command, templates, schemas, no sources or tests) and create-fwjs depending on it', async () => {
    const pkg = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8'));
    const create = JSON.parse(await readFile(path.join(repoRoot, 'packages/create-fwjs/package.json'), 'utf8'));
    expect(pkg).toMatchObject({ name: 'fwjs', bin: { fw: './dist/cli/bin.js' } });
    // One release: the initializer runs the fw create of the same version.
    expect(create).toMatchObject({ name: 'create-fwjs', version: pkg.version, dependencies: { fwjs: pkg.version }, bin: { 'create-fwjs': './index.js' }, engines: pkg.engines });
    expect(path.basename(fwTarball)).toBe(`fwjs-${pkg.version}.tgz`);
    const listed = (await run('tar', ['-tzf', fwTarball])).stdout.split('\n');
    expect(listed).toEqual(expect.arrayContaining(['package/dist/cli/bin.js', 'package/dist/runtime/index.js', 'package/dist/runtime/index.d.ts', 'package/templates/minimal-web/package.json', 'package/templates/minimal-web/.node-version', 'package/templates/minimal-web/_npmrc', 'package/schemas/fw-manifest.schema.json']));
    // npm leaves every .npmrc out of a package: the templates' ship as _npmrc, which fw create renames.
    expect(listed.filter((f) => f.endsWith('.npmrc'))).toEqual([]);
    // …but packs a template's package-lock.json (only the package's own, at its root, is left out):
    // the tree each template pins (README: "Template pins").
    expect(listed.filter((f) => f.endsWith('package-lock.json')).sort()).toEqual(templateNames.map((t) => `package/templates/${t}/package-lock.json`).sort());
    // Sources and fw's own tests stay home; the templates' tests are part of the apps they make.
    expect(listed.filter((f) => /^package\/(runtime|plugin|toolchain|cli|client|e2e|bench|packages)\/|^package\/dist\/.*\.test\.js$/.test(f))).toEqual([]);
  });

  it('creates an app outside the checkout that depends on fwjs, pins Node 24 and imports fwjs', async () => {
    const apps = path.join(work, 'apps');
    await mkdir(apps);
    // What `npm create fwjs my-app` runs (npm exec create-fwjs), installing nothing here.
    const bin = path.join(work, 'tools/node_modules/create-fwjs/index.js');
    const created = await runNode([bin, 'my-app', '--no-install', '--fw-spec', `file:${fwTarball}`, '--json'], { cwd: apps });
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ ok: true, template: 'minimal-web', installed: false, fwSpec: `file:${fwTarball}` });

    const app = path.join(apps, 'my-app');
    const pkg = JSON.parse(await readFile(path.join(app, 'package.json'), 'utf8'));
    const own = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({
      name: 'my-app',
      engines: { node: own.engines.node },
      dependencies: { fwjs: `file:${fwTarball}` },
      devDependencies: { node: own.devDependencies.node },
      scripts: { dev: 'fw dev', test: 'fw test', build: 'fw build', start: 'fw start', postinstall: 'fw postinstall' },
      allowScripts: { node: true },
    });
    expect(pkg.dependencies.fw).toBeUndefined();
    expect((await readFile(path.join(app, '.node-version'), 'utf8')).trim()).toBe('24');
    // npm on an older Node: quiet about engines (no setting for engine warnings alone), errors still shown.
    expect(settingsOf(await readFile(path.join(app, '.npmrc'), 'utf8'))).toEqual(['engine-strict=false', 'loglevel=error']);
    expect(existsSync(path.join(app, '_npmrc'))).toBe(false);
    const schema = await readFile(path.join(app, 'src/fw/schema.ts'), 'utf8');
    expect(schema).toContain("import { defineSchema, t, table } from 'fwjs';");
    expect(schema).toContain("declare module 'fwjs' {");
    expect(await readFile(path.join(app, 'web/vite.config.ts'), 'utf8')).toContain("from 'fwjs/vite'");

    // The created app runs on the packed fw: fw (its node_modules/.bin) generates, migrates, starts and answers /health.
    await mkdir(path.join(app, 'node_modules'));
    await symlink(path.join(work, 'tools/node_modules/fwjs'), path.join(app, 'node_modules/fwjs'));
    const fw = path.join(app, 'node_modules/fwjs/dist/cli/bin.js');
    const once = await runNode([fw, 'dev', '--once', '--json'], { cwd: app });
    expect(once.code, once.stdout + once.stderr).toBe(0);
    expect(JSON.parse(once.stdout)).toMatchObject({ ok: true });
    expect(existsSync(path.join(app, 'src/fw/_generated/api.ts'))).toBe(true);
  }, 180_000);

  it('npm create runs it: npm exec of the packed create-fwjs (what `npm create fwjs` runs) makes the app', async () => {
    // The real npm: it installs both tarballs and fwjs's dependencies from the registry into its npx
    // directory (most of them already in npm's cache from this checkout's install), then runs the bin.
    const cache = (await npm(['config', 'get', 'cache'], work)).stdout.trim();
    const npx = path.join(cache, '_npx');
    const before = new Set(existsSync(npx) ? await readdir(npx) : []);
    const apps = path.join(work, 'npm-create');
    await mkdir(apps);
    try {
      const created = await npm(['exec', '--yes', `--package=${fwTarball}`, `--package=${createTarball}`, '--', 'create-fwjs', 'my-app', '--no-install', '--json'], apps);
      expect(JSON.parse(created.stdout)).toMatchObject({ ok: true, dir: path.join(apps, 'my-app'), template: 'minimal-web', installed: false });
      const pkg = JSON.parse(await readFile(path.join(apps, 'my-app/package.json'), 'utf8'));
      // The fwjs it ran (the tarball npm installed it from, as its lock says), not a registry range
      // that names no published version.
      expect(pkg).toMatchObject({ name: 'my-app', dependencies: { fwjs: `file:${fwTarball}` }, scripts: { dev: 'fw dev' } });
      expect((await readFile(path.join(apps, 'my-app/.node-version'), 'utf8')).trim()).toBe('24');
    } finally {
      // This run's npx directory (~250 MB): the tarballs' paths are new every run, so it is never reused.
      for (const dir of existsSync(npx) ? await readdir(npx) : []) if (!before.has(dir)) await rm(path.join(npx, dir), { recursive: true, force: true });
    }
  }, 300_000);

  it("the guide's first step, as written (docs/getting-started.md): npm pack of a checkout, npx fw create --install of the tarball, an app that installed", async () => {
    const guide = await readFile(path.join(repoRoot, 'docs/getting-started.md'), 'utf8');
    const block = /<!-- run by e2e\/getting-fw.test.ts -->\n```sh\n([\s\S]*?)```/.exec(guide)?.[1];
    expect(block).toBeDefined();
    // The folder that holds the checkout, fw/; a user's shell (no npm_* variables from `npm test`),
    // npm's cache first (e2e/support/app.ts).
    const folder = path.join(work, 'guide');
    await mkdir(folder);
    await symlink(repoRoot, path.join(folder, 'fw'));
    const shell = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
    const cache = (await npm(['config', 'get', 'cache'], work)).stdout.trim();
    const npx = path.join(cache, '_npx');
    const before = new Set(existsSync(npx) ? await readdir(npx) : []);
    try {
      // Line by line, as typed, in one shell (`cd my-app` included), stopping at the first failure.
      const ran = await new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn('bash', ['-e', '-c', `${block!}\npwd`], { cwd: folder, env: { ...shell, FW_AI: 'mock', npm_config_prefer_offline: 'true' } });
        let output = '';
        child.stdout.on('data', (d) => (output += d));
        child.stderr.on('data', (d) => (output += d));
        child.on('close', (code) => resolve({ code, output }));
      });
      expect(ran.code, ran.output).toBe(0);
      const app = path.join(folder, 'my-app');
      expect(ran.output.trim().split('\n').at(-1)).toBe(app);
      const tarball = (await readdir(folder)).filter((f) => f.endsWith('.tgz'));
      expect(tarball).toEqual([path.basename(fwTarball)]);
      const pkg = JSON.parse(await readFile(path.join(app, 'package.json'), 'utf8'));
      expect(pkg.dependencies.fwjs).toBe(`file:${path.join(folder, tarball[0]!)}`);
      expect(JSON.parse(await readFile(path.join(app, 'node_modules/fwjs/package.json'), 'utf8')).version).toBe(JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')).version);
      expect(await unpinnedPackages('minimal-web', app)).toEqual([]);
    } finally {
      for (const dir of existsSync(npx) ? await readdir(npx) : []) if (!before.has(dir)) await rm(path.join(npx, dir), { recursive: true, force: true });
    }
  }, 600_000);

  // The machine's system Node when it is older than fw supports (20 here), and its npm.
  const oldNode = ['/usr/bin/node', '/usr/local/bin/node'].find((candidate) => {
    try {
      return unsupportedNodeMessage(execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim()) !== undefined && existsSync(path.join(path.dirname(candidate), 'npm'));
    } catch {
      return false;
    }
  });

  it.skipIf(!oldNode)('npm install of a created app on an older Node: no engine warnings, one line from fw postinstall, then the app runs fw on its pinned Node 24', async () => {
    // The real install from the registry (most packages already in npm's cache from this checkout's):
    // npm itself on the system's Node 20; its scripts get the `node` devDependency's Node 24 on PATH.
    const apps = path.join(work, 'node20');
    await mkdir(apps);
    const created = await runNode([path.join(work, 'tools/node_modules/create-fwjs/index.js'), 'my-app', '--no-install', '--fw-spec', `file:${fwTarball}`, '--json'], { cwd: apps });
    expect(created.code, created.stderr).toBe(0);
    const app = path.join(apps, 'my-app');
    // A user's shell: none of the npm_* variables `npm test` gives this suite, which the inner npm would
    // take as its own config (npm_config_user_agent naming the outer npm's Node 24, for one).
    const shell = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
    const env = { ...shell, PATH: [path.dirname(oldNode!), ...(process.env.PATH ?? '').split(path.delimiter).filter((dir) => !dir.includes('node_modules'))].join(path.delimiter) };
    const npmVersion = execFileSync('npm', ['--version'], { cwd: app, env, encoding: 'utf8' }).trim();
    const nodeVersion = execFileSync('node', ['-p', 'process.versions.node'], { cwd: app, env, encoding: 'utf8' }).trim();
    expect(unsupportedNodeMessage(nodeVersion)).toBeDefined();
    const install = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn('npm', ['install', '--no-audit', '--no-fund'], { cwd: app, env });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      child.on('close', (code) => resolve({ code, output }));
    });
    expect(install.code, install.output).toBe(0);
    expect(install.output).not.toContain('EBADENGINE');
    expect(install.output).not.toContain('npm warn');
    const fwLines = install.output.split('\n').filter((line) => line.startsWith('fw'));
    const pinned = execFileSync(path.join(app, 'node_modules/.bin/node'), ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    expect(pinned).toMatch(/^24\./);
    // Beside npm's banner for the root script (`> postinstall`, `> fw postinstall`), one line of fw's.
    expect(fwLines, install.output).toEqual([
      `fw: npm ran on Node.js ${nodeVersion}, older than fw supports (22.12), and .npmrc hides its engine warnings: nothing failed — this app's npm scripts and npx fw run on Node.js ${pinned}, its "node" devDependency.`,
    ]);
    expect(install.output).toMatch(/^added \d+ packages in /m);
    // The registry gave the tree minimal-web pins, whatever it has published since.
    expect(await unpinnedPackages('minimal-web', app)).toEqual([]);
    // …and the app's fw runs on that Node, under the same npm.
    const version = JSON.parse(execFileSync('npm', ['exec', '--', 'fw', '--version', '--json'], { cwd: app, env, encoding: 'utf8' })) as { node: string };
    expect(version.node).toBe(pinned);
    expect(Number(npmVersion.split('.')[0])).toBeGreaterThanOrEqual(11);
  }, 600_000);

  it('says how to use it when given no directory', async () => {
    const r = await runNode([path.join(work, 'tools/node_modules/create-fwjs/index.js')], { cwd: work });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Usage: npm create fwjs <dir>');
  });
});
