import { execFileSync, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../e2e/support/app.ts';
import { installNote, minimumNode, unsupportedNodeMessage } from './node-version.ts';

describe('the supported Node.js range', () => {
  it('refuses older versions in one line that says what to install', () => {
    for (const version of ['20.20.2', '22.11.0', '18.0.0']) {
      expect(unsupportedNodeMessage(version)).toBe(`fw needs Node.js 22.12 or newer, and this is ${version}: install Node.js 24 LTS (nvm install 24, or https://nodejs.org) and run the command again.`);
    }
    for (const version of ['22.12.0', '22.20.1', '24.21.0', '25.0.0']) expect(unsupportedNodeMessage(version)).toBeUndefined();
  });

  it('is the same in fw’s engines, every template’s engines and .node-version', async () => {
    const fw = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8'));
    expect(fw.engines.node).toBe(`>=${minimumNode}`);
    for (const template of ['minimal-web', 'nuxt-web', 'b2b-support-web']) {
      const pkg = JSON.parse(await readFile(path.join(repoRoot, 'templates', template, 'package.json'), 'utf8'));
      expect([template, pkg.engines.node]).toEqual([template, `>=${minimumNode}`]);
      const pinned = (await readFile(path.join(repoRoot, 'templates', template, '.node-version'), 'utf8')).trim();
      expect(unsupportedNodeMessage(`${pinned}.0.0`)).toBeUndefined();
    }
  });

  // The machine's system Node (20 here) when it is older than fw supports; the check itself is above.
  const systemNode = ['/usr/bin/node', '/usr/local/bin/node'].find((candidate) => {
    try {
      return unsupportedNodeMessage(execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim()) !== undefined;
    } catch {
      return false;
    }
  });

  it('the Vite plugin (so the Nuxt module too) and createRuntime say the same under an older Node', () => {
    if (!systemNode) return expect(unsupportedNodeMessage(process.versions.node)).toBeUndefined();
    const script = `
      const vite = await import(${JSON.stringify(path.join(repoRoot, 'dist/plugin/vite.js'))});
      const runtime = await import(${JSON.stringify(path.join(repoRoot, 'dist/runtime/create-runtime.js'))});
      for (const start of [() => vite.default(), () => runtime.createRuntime({})]) {
        try { await start(); console.log('started'); } catch (error) { console.log(JSON.stringify([error.kind, error.message])); }
      }`;
    const lines = execFileSync(systemNode, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim().split('\n');
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      ['unsupported_node', expect.stringMatching(/^fw needs Node\.js 22\.12 or newer, and this is 20\.\d+\.\d+: install Node\.js 24 LTS/)],
      ['unsupported_node', expect.stringMatching(/^fw needs Node\.js 22\.12 or newer/)],
    ]);
  });

  const npmOn = (node: string) => `npm/11.19.1 node/v${node} linux x64 workspaces/false`;
  const onPinnedNode = (npmNode: string) =>
    `fw: npm ran on Node.js ${npmNode}, older than fw supports (22.12), and .npmrc hides its engine warnings: nothing failed — this app's npm scripts and npx fw run on Node.js 24.21.0, its "node" devDependency.`;

  it('fw postinstall: one line when npm ran on an older Node, naming the Node the scripts run on; nothing otherwise', () => {
    expect(installNote(npmOn('20.20.2'), '24.21.0')).toBe(onPinnedNode('20.20.2'));
    expect(installNote('pnpm/10.4.0 npm/? node/v22.11.0 linux x64', '24.21.0')).toBe(onPinnedNode('22.11.0'));
    // The pinned Node did not install (the script runs on the old one too): what to install instead.
    expect(installNote(npmOn('20.20.2'), '20.20.2')).toBe(
      'fw: npm ran on Node.js 20.20.2, older than fw supports (22.12), and this app\'s own Node.js (its "node" devDependency) is not installed: install Node.js 24 LTS (nvm install 24, or https://nodejs.org) and run npm install again.',
    );
    for (const userAgent of [npmOn('22.12.0'), npmOn('24.21.0'), 'npm/11.19.1', '', undefined]) expect(installNote(userAgent, '24.21.0')).toBeUndefined();
  });

  it('fw postinstall, the process: that line on stderr alone and exit 0 under an older npm; silent under a supported one', () => {
    const bin = path.join(repoRoot, 'dist/cli/bin.js');
    const run = (node: string, userAgent: string) => spawnSync(node, [bin, 'postinstall'], { encoding: 'utf8', env: { ...process.env, npm_config_user_agent: userAgent } });
    const old = run(process.execPath, npmOn('20.20.2'));
    expect([old.status, old.stdout, old.stderr]).toEqual([0, '', `${onPinnedNode('20.20.2').replace('24.21.0', process.versions.node)}\n`]);
    const current = run(process.execPath, npmOn('24.21.0'));
    expect([current.status, current.stdout, current.stderr]).toEqual([0, '', '']);
    if (!systemNode) return;
    // On the older Node itself (the pinned one missing): the line that says what to install, still exit 0.
    const alone = run(systemNode, npmOn('20.20.2'));
    expect(alone.status).toBe(0);
    expect(alone.stderr).toMatch(/^fw: npm ran on Node\.js 20\.20\.2, older than fw supports \(22\.12\), and this app's own Node\.js .* not installed: install Node\.js 24 LTS .*\n$/);
  });

  it('fw under the machine’s own older Node prints that line and exits 1 before loading anything else', () => {
    if (!systemNode) return expect(unsupportedNodeMessage(process.versions.node)).toBeUndefined();
    let failure: { status: number; stderr: string } | undefined;
    try {
      // Without a pinned Node to re-run on (its re-run's marker says it ran already): the line, exit 1 (fw create alone runs on an older Node).
      execFileSync(systemNode, [path.join(repoRoot, 'dist/cli/bin.js'), 'check', '--json'], { encoding: 'utf8', stdio: 'pipe', env: { ...process.env, FW_REEXEC_PINNED_NODE: '1' } });
    } catch (error) {
      failure = error as { status: number; stderr: string };
    }
    expect(failure?.status).toBe(1);
    expect(failure?.stderr).toMatch(/^fw needs Node\.js 22\.12 or newer, and this is 2\d\.\d+\.\d+: install Node\.js 24 LTS .*\n$/);
  });
});
