import { existsSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, repoRoot, runFw, runNode } from './support/app.ts';

const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
const installed = async (dep: string) => (JSON.parse(await readFile(path.join(repoRoot, 'node_modules', dep, 'package.json'), 'utf8')) as { version: string }).version;

// `fw make ai-chat` on an app made from minimal-web, whose bridge predates useFwRuntime. Each test
// gets its own copy of that app and runs every step it relies on itself.
describe('fw make ai-chat', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  const expectedFiles = ['src/ai/agents/support.ts', 'web/src/components/SupportChat.tsx', 'web/src/lib/fw.ts', 'package.json'];

  beforeEach(async () => {
    app = await createTestApp('minimal-web', {}, { insideRepo: true });
    const bridge = path.join(app.dir, 'web/src/lib/fw.ts');
    await writeFile(bridge, (await readFile(bridge, 'utf8')).replace(', useFwRuntime }', ' }'));
  });
  afterEach(() => app?.remove());

  /** The step a test builds on: `fw make ai-chat support` on this test's fresh app. */
  async function makeSupport() {
    const made = await runFw(['make', 'ai-chat', 'support', '--json'], { cwd: app.dir });
    expect(made.code, made.stdout + made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ ok: true, agent: 'support', dryRun: false, files: expectedFiles });
  }

  it('--dry-run lists the files and writes nothing', async () => {
    const before = await readFile(path.join(app.dir, 'package.json'), 'utf8');
    const dry = await runFw(['make', 'ai-chat', 'support', '--dry-run', '--json'], { cwd: app.dir });
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toEqual({ ok: true, agent: 'support', dryRun: true, files: expectedFiles, next: expect.any(Array) });
    expect(existsSync(path.join(app.dir, 'src/ai/agents/support.ts'))).toBe(false);
    expect(existsSync(path.join(app.dir, 'web/src/components/SupportChat.tsx'))).toBe(false);
    expect(await readFile(path.join(app.dir, 'web/src/lib/fw.ts'), 'utf8')).not.toContain('useFwRuntime');
    expect(await readFile(path.join(app.dir, 'package.json'), 'utf8')).toBe(before);
  });

  it('writes the agent with every entry as a tool, the chat component, the bridge hook and the AI SDK dependencies', async () => {
    const made = await runFw(['make', 'ai-chat', 'support', '--json'], { cwd: app.dir });
    expect(made.code, made.stdout + made.stderr).toBe(0);
    const out = JSON.parse(made.stdout);
    expect(out).toEqual({ ok: true, agent: 'support', dryRun: false, files: expectedFiles, next: expect.any(Array) });
    expect(out.next).toContainEqual(expect.stringContaining("import { SupportChat } from './components/SupportChat.tsx'"));

    const agent = await readFile(path.join(app.dir, 'src/ai/agents/support.ts'), 'utf8');
    // The template's tsconfig allows `.ts` imports.
    expect(agent).toContain("import createNote from '../../commands/createNote.ts';");
    expect(agent).toContain("import liveNotes from '../../queries/liveNotes.ts';");
    expect(agent).toContain('tools: { createNote, deleteNote, updateNote, findNotes, listNotes, liveNotes },');
    expect(agent).toContain("stopWhen: { kind: 'stepCount', maxSteps: 5 },");

    const chat = await readFile(path.join(app.dir, 'web/src/components/SupportChat.tsx'), 'utf8');
    expect(chat).toContain("import { useFwRuntime } from '../lib/fw.ts';");
    expect(chat).toContain("body: { agent: 'support' }");
    expect(chat).toContain('sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses');
    for (const id of ['ai-chat', 'ai-chat-input', 'ai-chat-send', 'ai-approve', 'ai-deny', 'ai-message']) expect(chat).toContain(`data-testid="${id}"`);
    expect(await readFile(path.join(app.dir, 'web/src/lib/fw.ts'), 'utf8')).toContain(
      'export const { FwProvider, useCommand, useQuery, useLiveQuery, usePaginatedLiveQuery, useFwClient, useFwRuntime } = createFwReact(api);',
    );

    const pkg = JSON.parse(await readFile(path.join(app.dir, 'package.json'), 'utf8'));
    expect(pkg.dependencies).toMatchObject({ ai: await installed('ai'), '@ai-sdk/react': await installed('@ai-sdk/react'), react: expect.any(String) });

    // The scaffolder leaves the app green: the generated contract already lists the new agent.
    const check = await runFw(['check', '--json'], { cwd: app.dir });
    expect(JSON.parse(check.stdout).diagnostics.filter((d: { severity: string }) => d.severity === 'error')).toEqual([]);
    expect(check.code).toBe(0);
  });

  it('refuses to overwrite the files without --yes (a dry run says so instead), and replaces them with --yes', async () => {
    await makeSupport();
    const refused = await runFw(['make', 'ai-chat', 'support', '--json'], { cwd: app.dir });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, kind: 'file_exists', suggestions: [expect.stringContaining('--dry-run'), expect.stringContaining('--yes')] });
    // The suggested --dry-run runs: it lists the files and says the real run needs --yes.
    const dry = await runFw(['make', 'ai-chat', 'support', '--dry-run', '--json'], { cwd: app.dir });
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      ok: true, dryRun: true, notes: ['src/ai/agents/support.ts and web/src/components/SupportChat.tsx already exist: the real run needs --yes to replace them.'],
    });
    const again = await runFw(['make', 'ai-chat', 'support', '--yes', '--json'], { cwd: app.dir });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    // The bridge has useFwRuntime now: only the agent, the component and package.json are written.
    expect(JSON.parse(again.stdout).files).toEqual(['src/ai/agents/support.ts', 'web/src/components/SupportChat.tsx', 'package.json']);
  });

  it('leaves an app whose agent loads, that typechecks (backend and web) and builds with the chat mounted', async () => {
    await makeSupport();
    const agents = await runFw(['ai', 'agents', '--json'], { cwd: app.dir });
    expect(agents.code, agents.stdout + agents.stderr).toBe(0);
    expect(JSON.parse(agents.stdout).agents).toContainEqual(expect.objectContaining({ name: 'support', tools: ['createNote', 'deleteNote', 'findNotes', 'listNotes', 'liveNotes', 'updateNote'] }));
    const generate = await runFw(['generate', '--json'], { cwd: app.dir });
    expect(generate.code, generate.stdout + generate.stderr).toBe(0);

    // Mounted as the `next` hint says.
    const appFile = path.join(app.dir, 'web/src/App.tsx');
    await writeFile(
      appFile,
      `import { SupportChat } from './components/SupportChat.tsx';\n${(await readFile(appFile, 'utf8')).replace('    </main>', '      <SupportChat />\n    </main>')}`,
    );
    for (const project of ['tsconfig.json', 'web/tsconfig.json']) {
      const result = await runNode([tsc, '-p', project, '--noEmit'], { cwd: app.dir });
      expect(result.stdout + result.stderr, project).toBe('');
      expect(result.code, project).toBe(0);
    }
    const build = await runNode([path.join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', 'web', '--logLevel', 'warn'], { cwd: app.dir });
    expect(build.code, build.stdout + build.stderr).toBe(0);
    const assets = path.join(app.dir, 'web/dist/assets');
    const bundle = (await Promise.all((await readdir(assets)).filter((f) => f.endsWith('.js')).map((f) => readFile(path.join(assets, f), 'utf8')))).join('\n');
    expect(bundle).toContain('/ai/agents/chat');
  }, 120_000);

  it('names agents as entries are named, and rejects names that are not', async () => {
    // A second agent in an app that has one: the bridge already has useFwRuntime, so only the
    // agent, its component and package.json are listed.
    await makeSupport();
    const dry = await runFw(['make', 'ai-chat', 'support-bot', '--dry-run', '--json'], { cwd: app.dir });
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ agent: 'supportBot', files: ['src/ai/agents/supportBot.ts', 'web/src/components/SupportBotChat.tsx', 'package.json'] });
    for (const bad of ['9lives', 'support!', 'su pport']) {
      const invalid = await runFw(['make', 'ai-chat', bad, '--json'], { cwd: app.dir });
      expect(invalid.code, bad).toBe(1);
      expect(JSON.parse(invalid.stdout), bad).toMatchObject({ ok: false, kind: 'invalid_name' });
    }
  });
});

describe('fw make ai-chat without a React web/', () => {
  it('writes only the agent when the app has no web/, and says so; it imports `.js` where tsconfig forbids `.ts` imports', async () => {
    const app = await createTestApp('minimal-web', {}, { insideRepo: true });
    try {
      // An app made before fw had agents: no web/, no src/ai/, no tests/, no `.ts` imports.
      await rm(path.join(app.dir, 'web'), { recursive: true });
      await rm(path.join(app.dir, 'src/ai'), { recursive: true, force: true });
      await rm(path.join(app.dir, 'tests'), { recursive: true, force: true });
      const tsconfig = path.join(app.dir, 'tsconfig.json');
      await writeFile(tsconfig, (await readFile(tsconfig, 'utf8')).replace(/\s*"allowImportingTsExtensions": true,/, ''));
      const before = await readFile(path.join(app.dir, 'package.json'), 'utf8');
      const made = await runFw(['make', 'ai-chat', 'helper', '--json'], { cwd: app.dir });
      expect(made.code, made.stdout + made.stderr).toBe(0);
      expect(JSON.parse(made.stdout)).toEqual({
        ok: true,
        agent: 'helper',
        dryRun: false,
        files: ['src/ai/agents/helper.ts'],
        next: expect.any(Array),
        notes: [expect.stringContaining('no web/')],
      });
      expect(await readFile(path.join(app.dir, 'src/ai/agents/helper.ts'), 'utf8')).toContain("import createNote from '../../commands/createNote.js';");
      expect(await readFile(path.join(app.dir, 'package.json'), 'utf8')).toBe(before);
      const typecheck = await runNode([tsc, '-p', 'tsconfig.json', '--noEmit'], { cwd: app.dir });
      expect(typecheck.stdout + typecheck.stderr).toBe('');
      const agents = await runFw(['ai', 'agents', '--json'], { cwd: app.dir });
      expect(agents.code, agents.stdout + agents.stderr).toBe(0);
      expect(JSON.parse(agents.stdout).agents).toEqual([expect.objectContaining({ name: 'helper', tools: ['createNote', 'deleteNote', 'findNotes', 'listNotes', 'liveNotes', 'updateNote'] })]);
    } finally {
      await app.remove();
    }
  });

  it('refuses a Nuxt web/, naming why (no @ai-sdk/vue on fw’s ai version)', async () => {
    const app = await createTestApp('nuxt-web');
    try {
      const refused = await runFw(['make', 'ai-chat', 'support', '--json'], { cwd: app.dir });
      expect(refused.code).toBe(1);
      const out = JSON.parse(refused.stdout);
      expect(out).toMatchObject({ ok: false, kind: 'unsupported_web' });
      expect(out.message).toContain('@ai-sdk/vue');
      expect(existsSync(path.join(app.dir, 'src/ai/agents/support.ts'))).toBe(false);
    } finally {
      await app.remove();
    }
  });
});
