import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, repoRoot, type RunningFw, runFw, startFw } from './support/app.ts';
import { hasChromium, launchChromium } from './support/browser.ts';

/** The words of the guide's `npx fw auth token …` line (docs/getting-started.md, step 6), after `npx fw`. */
async function guideTokenCommand(): Promise<string[]> {
  const guide = await readFile(path.join(repoRoot, 'docs/getting-started.md'), 'utf8');
  const line = guide.split('\n').find((l) => l.startsWith('npx fw auth token '));
  if (!line) throw new Error('docs/getting-started.md has no `npx fw auth token` line');
  return line.replace(/#.*$/, '').trim().split(/\s+/).slice(2);
}

// The guide's production step (docs/getting-started.md, 6) on a minimal-web app: fw build, fw db migrate,
// the app's own HS256 secret, `fw auth token … --link`, fw start; a browser that opens the link is signed
// in. The same commands as docs/deploy.md's first block (on the embedded database here).
describe.skipIf(!hasChromium)('signing in to a built app from the template', () => {
  const tenant = '00000000-0000-4000-8000-000000000001';
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let server: RunningFw | undefined;
  let browser: Browser;
  let url: string;
  const env = {
    DATABASE_URL: '',
    FW_AUTH: 'jwt',
    FW_JWT_ISSUER: 'https://my-app.example/',
    FW_JWT_AUDIENCE: 'my-app',
    FW_JWT_HS_SECRET: 'a-test-secret-of-more-than-32-characters-0123456789',
  };

  beforeAll(async () => {
    app = await createTestApp('minimal-web', {}, { insideRepo: true });
    // As a shell builds it: vitest's NODE_ENV=test would make Vite build a dev web app (with devAuth).
    const built = await runFw(['build', '--json'], { cwd: app.dir, env: { ...env, NODE_ENV: 'production' } });
    expect(built.code, built.stderr).toBe(0);
    const migrated = await runFw(['db', 'migrate', '--json'], { cwd: app.dir, env });
    expect(migrated.code, migrated.stderr).toBe(0);
    server = await startFw(['start', '--port', '0', '--host', '127.0.0.1', '--json'], { cwd: app.dir, env, timeoutMs: 90_000 });
    url = server.ready.serverUrl as string;
    browser = await launchChromium();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await app?.remove();
  });

  it('says unauthenticated without a token; the link of fw auth token signs in, and the token is kept', async () => {
    const words = await guideTokenCommand();
    expect(words).toEqual(['auth', 'token', '--user', 'me', '--tenant', tenant, '--role', 'member', '--link', 'http://127.0.0.1:3000']);
    // The guide's command, with this server's address for the guide's port 3000.
    const minted = await runFw([...words.slice(0, -1), url], { cwd: app.dir, env });
    expect(minted.code, minted.stderr).toBe(0);
    const link = minted.stdout.trim();
    expect(link).toMatch(new RegExp(`^${url}/#token=[\\w-]+\\.[\\w-]+\\.[\\w-]+$`));

    const context = await browser.newContext();
    const signedOut = await context.newPage();
    await signedOut.goto(url);
    await expect.poll(() => signedOut.getByRole('alert').locator('code').first().textContent(), { timeout: 30_000 }).toBe('unauthenticated');

    // The link, opened as a user opens it: a page of its own in the same browser.
    const page = await context.newPage();
    await page.goto(link);
    // The token left the address bar (kept in this browser), and the live list answers as `me`.
    await expect.poll(() => page.url(), { timeout: 30_000 }).toBe(`${url}/`);
    await expect.poll(() => page.getByRole('status').textContent(), { timeout: 30_000 }).toBe('Live');
    await page.getByLabel('Title').fill('Signed in with fw auth token');
    await page.getByRole('button', { name: 'Add note' }).click();
    const list = page.getByRole('list', { name: 'Notes' });
    await expect.poll(() => list.getByRole('heading').allTextContents(), { timeout: 30_000 }).toEqual(['Signed in with fw auth token']);
    expect(await page.getByRole('alert').count()).toBe(0);

    // A reload signs in with the kept token; the note is the signed-in user's.
    await page.reload();
    await expect.poll(() => list.getByRole('heading').allTextContents(), { timeout: 30_000 }).toEqual(['Signed in with fw auth token']);
    const token = new URL(link).hash.slice('#token='.length);
    const notes = await fetch(`${url}/queries/listNotes`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{"args":{}}' });
    expect(notes.status).toBe(200);
    expect((await notes.json()).result).toMatchObject([{ title: 'Signed in with fw auth token', author_id: 'me', tenant_id: tenant }]);
  });

  it('fw auth token says what to set when the app verifies no shared secret', async () => {
    const refused = await runFw(['auth', 'token', '--user', 'me', '--json'], { cwd: app.dir, env: { FW_AUTH: 'none', FW_JWT_ISSUER: '', FW_JWT_AUDIENCE: '', FW_JWT_HS_SECRET: '' } });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toEqual({
      ok: false,
      kind: 'auth_token_unavailable',
      message: "fw auth token signs with the app's own shared secret, and FW_AUTH is none, not jwt.",
      suggestions: [
        'Set FW_AUTH=jwt, FW_JWT_ISSUER, FW_JWT_AUDIENCE and FW_JWT_HS_SECRET (32+ random characters) as fw start has them (docs/auth.md).',
        'With an identity provider (RS256, ES256, EdDSA), sign in there and use its access token.',
      ],
    });
  });
});
