import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../../e2e/support/app.ts';
import { runChecks } from '../../toolchain/check/check.ts';

const files = {
  'src/commands/sendReminder.ts': "import { command } from 'fwjs';\nexport default command({ handler: async () => {} });\n",
  'src/commands/startTrial.ts': [
    "import { command } from 'fwjs';",
    'export default command({',
    '  handler: async (ctx) => {',
    "    await ctx.scheduler.runAfter(1000, 'sendReminder', {});",
    "    await ctx.scheduler.runAt(new Date(), 'sendRemindr', {});",
    "    await ctx.scheduler.runAfter(5, 'chargeCard');",
    "    const name = 'built' + 'AtRunTime';",
    '    await ctx.scheduler.runAfter(5, name, {});',
    '  },',
    '});',
    '',
  ].join('\n'),
};

describe('fw check: ctx.scheduler names a command or action of the app', () => {
  let app: Awaited<ReturnType<typeof createTestApp>> | undefined;
  afterAll(() => app?.remove());

  it('reports each literal name that is no command or action, at its position, with the nearest name', async () => {
    app = await createTestApp('minimal-web', files);
    const report = await runChecks({ root: app.dir, typecheck: false });
    expect(report.ok).toBe(false);
    const found = report.diagnostics.filter((d) => d.code === 'unknown_scheduled_call');
    expect(found).toEqual([
      expect.objectContaining({ severity: 'error', path: 'src/commands/startTrial.ts:5:43', hint: "Did you mean 'sendReminder'?" }),
      expect.objectContaining({
        severity: 'error',
        path: 'src/commands/startTrial.ts:6:37',
        message: 'command startTrial schedules "chargeCard" (ctx.scheduler.runAfter), which is no command or action of the app.',
        hint: 'Add src/commands/chargeCard.ts or src/actions/chargeCard.ts, or fix the name.',
      }),
    ]);
  });
});
