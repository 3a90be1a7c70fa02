import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FwFailure } from '../../runtime/core/failure.ts';
import { resolveConfig } from '../../runtime/config/resolve-config.ts';
import { requireAuthChoice } from './auth-choice.ts';
import { startProduction } from './start.ts';

describe('fw start without FW_AUTH', () => {
  const saved = process.env.FW_AUTH;
  let dir: string | undefined;
  afterEach(async () => {
    if (saved === undefined) delete process.env.FW_AUTH;
    else process.env.FW_AUTH = saved;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('refuses with auth_not_configured, naming what to set, before it loads anything', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'fw-start-auth-'));
    await mkdir(path.join(dir, '.fw/build/server'), { recursive: true });
    // Not a loadable build: the refusal comes first.
    await writeFile(path.join(dir, '.fw/build/server/manifest.json'), '{}');
    delete process.env.FW_AUTH;
    const refused = await startProduction({ root: dir, port: 0 }).then(() => undefined, (error: unknown) => error);
    expect(refused).toBeInstanceOf(FwFailure);
    expect(refused).toMatchObject({
      kind: 'auth_not_configured',
      message: 'auth_not_configured: FW_AUTH is not set, so fw start would answer 401 to every non-public entry; set FW_AUTH=jwt (with FW_JWT_ISSUER and FW_JWT_AUDIENCE), or FW_AUTH=none to serve anonymous callers on purpose.',
      suggestions: [
        'FW_AUTH=jwt FW_JWT_ISSUER=https://login.example.com/ FW_JWT_AUDIENCE=my-api fw start  (docs/auth.md)',
        'FW_AUTH=none fw start  (intended: only public entries answer)',
      ],
    });
  });

  it('accepts any explicit choice, none included (the auth settings are checked where they are parsed)', () => {
    for (const mode of ['none', 'jwt', 'dev-headers']) expect(() => requireAuthChoice(resolveConfig({ FW_AUTH: mode }))).not.toThrow();
    expect(() => requireAuthChoice(resolveConfig({}))).toThrow(FwFailure);
    expect(() => requireAuthChoice(resolveConfig({ FW_AUTH: '  ' }))).toThrow(FwFailure);
  });
});
