import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/app.ts';
import { changedPackages } from './templates-latest/latest.ts';

// The command itself. Its real run installs every template from the registry, so it is run by hand
// (README: "Template pins"), never by the suite.
function templatesLatest(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'e2e/templates-latest/run.ts'), ...args], { cwd: repoRoot });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm run templates:latest', () => {
  it('refuses an unknown template and a hold without a version before packing anything, with a JSON failure', async () => {
    const unknown = await templatesLatest(['--templates', 'nope', '--json']);
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ ok: false, kind: 'invalid_arguments', message: expect.stringContaining('nope') });
    const hold = await templatesLatest(['--hold', 'vite', '--json']);
    expect(hold.code).toBe(2);
    expect(JSON.parse(hold.stdout)).toMatchObject({ ok: false, kind: 'invalid_arguments', message: 'A hold names a version: vite@<version>.' });
    expect(unknown.stderr + hold.stderr).toBe('');
  });

  it('reports each package whose versions moved from the pinned lock, by name, fwjs aside', () => {
    const pinned = {
      packages: {
        '': { name: 'nuxt-web' },
        'node_modules/vite': { version: '8.3.8' },
        'node_modules/vue': { version: '3.5.47' },
        'node_modules/gone': { version: '1.0.0' },
        'node_modules/a/node_modules/rolldown': { version: '1.2.19' },
      },
    };
    const latest = {
      packages: {
        '': { name: 'nuxt-web' },
        'node_modules/fwjs': { version: '0.1.0' },
        'node_modules/fwjs/node_modules/zod': { version: '4.7.0' },
        'node_modules/vite': { version: '8.4.1' },
        'node_modules/vite/node_modules/rolldown': { version: '1.3.4' },
        'node_modules/a/node_modules/rolldown': { version: '1.2.19' },
        'node_modules/vue': { version: '3.5.47' },
        'node_modules/@scope/new': { version: '2.0.0' },
      },
    };
    expect(changedPackages(pinned, latest)).toEqual([
      { name: '@scope/new', pinned: [], latest: ['2.0.0'] },
      { name: 'gone', pinned: ['1.0.0'], latest: [] },
      { name: 'rolldown', pinned: ['1.2.19'], latest: ['1.2.19', '1.3.4'] },
      { name: 'vite', pinned: ['8.3.8'], latest: ['8.4.1'] },
    ]);
  });
});
