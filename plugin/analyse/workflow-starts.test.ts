import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../../e2e/support/app.ts';
import { runChecks } from '../../toolchain/check/check.ts';

const files = {
  'src/workflows/onboardUser.ts': "import { workflow } from 'fwjs';\nexport default workflow({ handler: async (ctx) => { await ctx.step('hello', () => 1); } });\n",
  'src/commands/signUp.ts': [
    "import { command } from 'fwjs';",
    'export default command({',
    '  handler: async (ctx) => {',
    "    await ctx.startWorkflow('onboardUser', {});",
    "    await ctx.startWorkflow('onbaordUser', {});",
    "    await ctx.startWorkflow('sendReport', {});",
    "    const name = 'built' + 'AtRunTime';",
    '    await ctx.startWorkflow(name, {});',
    '  },',
    '});',
    '',
  ].join('\n'),
};

describe('fw check: ctx.startWorkflow names a workflow of the app', () => {
  let app: Awaited<ReturnType<typeof createTestApp>> | undefined;
  afterAll(() => app?.remove());

  it('reports each literal name that is no workflow, at its position, with the nearest name', async () => {
    app = await createTestApp('minimal-web', files);
    const report = await runChecks({ root: app.dir, typecheck: false });
    expect(report.ok).toBe(false);
    expect(report.checks).toContainEqual(expect.objectContaining({ name: 'analysis', ok: false, errors: 2 }));
    const found = report.diagnostics.filter((d) => d.code === 'unknown_workflow');
    expect(found).toEqual([
      expect.objectContaining({ severity: 'error', path: 'src/commands/signUp.ts:5:29', hint: "Did you mean 'onboardUser'?" }),
      expect.objectContaining({
        severity: 'error',
        path: 'src/commands/signUp.ts:6:29',
        message: 'command signUp starts workflow "sendReport", which the app does not have (workflows: onboardUser).',
        hint: expect.stringContaining('Add src/workflows/sendReport.ts'),
      }),
    ]);
  });
});
