import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unsupportedNodeMessage } from '../runtime/core/node-version.ts';
import { cliPath, repoRoot, type RunResult } from './support/app.ts';
import { spawn } from 'node:child_process';

// The machine's system Node when it is older than fw supports (20 here).
const oldNode = ['/usr/bin/node', '/usr/local/bin/node'].find((candidate) => {
  try {
    return unsupportedNodeMessage(execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim()) !== undefined;
  } catch {
    return false;
  }
});
const pinned = path.join(repoRoot, 'node_modules/node/bin/node');

/** `fw …` run by the old Node itself (as `#!/usr/bin/env node` does when it comes first on PATH). */
function onOldNode(args: string[], cwd: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(oldNode!, [cliPath, ...args], { cwd, env: { ...process.env, FW_AI: 'mock' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.skipIf(!oldNode || !existsSync(pinned))('fw on a Node older than it supports', () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'fw-old-node-'));
  });
  afterAll(() => rm(work, { recursive: true, force: true }));

  it("runs itself on the app's pinned Node (its node devDependency) instead of asking for another", async () => {
    // An installed app's pinned Node: node_modules/.bin/node, the `node` package's binary.
    const app = path.join(work, 'app');
    await mkdir(path.join(app, 'node_modules/.bin'), { recursive: true });
    await symlink(pinned, path.join(app, 'node_modules/.bin/node'));
    const version = await onOldNode(['--version', '--json'], app);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stderr).toBe('');
    const pinnedVersion = execFileSync(pinned, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    expect(JSON.parse(version.stdout)).toMatchObject({ node: pinnedVersion });
    // Its exit code comes back: a failing command still fails.
    const unknown = await onOldNode(['bogus'], app);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('bogus');
  });

  it('creates an app as it is (the install brings the app its Node)', async () => {
    const created = await onOldNode(['create', 'made-on-old-node', '--no-install', '--fw-spec', `file:${repoRoot}`, '--json'], work);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ ok: true, dir: path.join(work, 'made-on-old-node'), installed: false });
    expect(JSON.parse(await readFile(path.join(work, 'made-on-old-node/package.json'), 'utf8')).devDependencies.node).toMatch(/^\^24\./);
  });
});
