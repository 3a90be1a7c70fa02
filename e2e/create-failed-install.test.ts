import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFw } from './support/app.ts';

// An install that fails at once and offline: the fwjs spec names a tarball that is not there.
describe('fw create --install when the install fails', () => {
  let work: string;
  const missing = '/nonexistent/fwjs-0.0.0.tgz';
  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'fw-failed-install-'));
  });
  afterAll(() => rm(work, { recursive: true, force: true }));

  it('leaves no half-made app and says what to do', async () => {
    const failed = await runFw(['create', 'my-app', '--install', '--fw-spec', `file:${missing}`, '--json'], { cwd: work });
    expect(failed.code).toBe(1);
    const dir = path.join(work, 'my-app');
    expect(JSON.parse(failed.stdout)).toEqual({
      ok: false,
      kind: 'install_failed',
      message: `npm install exited with 254 in ${dir}. fw create removed what it had written in ${dir}; nothing is left half-made.`,
      suggestions: [
        'Fix what npm said above (a network error: run again once online; a fwjs spec that does not install: --fw-spec with a tarball, a checkout or a published version), then run the same fw create again.',
        `fw create my-app --template minimal-web --fw-spec file:${missing} without --install, then cd my-app && npm install, to keep the app and install it yourself.`,
      ],
    });
    // npm's own error is on stderr, above the failure.
    expect(failed.stderr).toContain(missing);
    expect(existsSync(dir)).toBe(false);
  });

  it('empties a folder it was given empty, and keeps the folder', async () => {
    const dir = path.join(work, 'given');
    await mkdir(dir);
    const failed = await runFw(['create', 'given', '--install', '--fw-spec', `file:${missing}`, '--json'], { cwd: work });
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ ok: false, kind: 'install_failed' });
    expect(await readdir(dir)).toEqual([]);
  });
});
