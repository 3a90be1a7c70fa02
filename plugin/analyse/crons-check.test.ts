import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../../e2e/support/app.ts';
import { runChecks } from '../../toolchain/check/check.ts';
import { type CronList, inspectApp } from '../../toolchain/inspect/inspect.ts';
import { generateArtifacts } from '../generate/generate.ts';

const command = "import { command, z } from 'fwjs';\nexport default command({ policy: 'system', args: { days: z.number() }, handler: async () => {} });\n";
const badCrons = [
  "import { crons } from 'fwjs';",
  'export default crons({',
  "  nightly: { cron: '0 3 * * *', timezone: 'Europe/Berlin', call: 'purgeOld', args: { days: 30 } },",
  "  typo: { every: '1h', call: 'purgeOdl', args: { days: 1 } },",
  "  broken: { cron: '0 25 * * *', call: 'purgeOld', args: { days: 1 } },",
  "  wrongArgs: { every: '1d', call: 'purgeOld', args: { days: 'many' } },",
  '});',
  '',
].join('\n');

describe('src/crons.ts in fw check, the contract and fw inspect', () => {
  let app: Awaited<ReturnType<typeof createTestApp>> | undefined;
  afterAll(() => app?.remove());

  it('fw check reports an unknown target, a bad expression and args the target refuses, each at its cron', async () => {
    app = await createTestApp('minimal-web', { 'src/commands/purgeOld.ts': command, 'src/crons.ts': badCrons });
    const report = await runChecks({ root: app.dir, typecheck: false });
    expect(report.ok).toBe(false);
    const crons = report.diagnostics.filter((d) => d.file === 'src/crons.ts');
    expect(crons.map((d) => [d.code, d.path])).toEqual([
      ['unknown_cron_target', 'src/crons.ts:4:3'],
      ['invalid_cron', 'src/crons.ts:5:3'],
      ['invalid_cron', 'src/crons.ts:6:3'],
    ]);
    expect(crons[0]).toMatchObject({ message: 'cron "typo" calls "purgeOdl", which is no command or action of the app.', hint: expect.stringContaining('purgeOld') });
    expect(crons[2]!.message).toContain("cron \"wrongArgs\": its args do not pass command purgeOld's args schema");
  });

  it('records the crons in api.json and lists their next runs', async () => {
    const file = path.join(app!.dir, 'src/crons.ts');
    await writeFile(file, badCrons.split('\n').filter((line) => !/typo|broken|wrongArgs/.test(line)).join('\n'));
    await generateArtifacts({ root: app!.dir });
    const api = JSON.parse(await readFile(path.join(app!.dir, 'src/fw/_generated/api.json'), 'utf8'));
    expect(api.crons).toEqual([{ name: 'nightly', call: 'purgeOld', cron: '0 3 * * *', timezone: 'Europe/Berlin', every: null, tenant: null, forEachTenant: null }]);
    expect((await runChecks({ root: app!.dir, typecheck: false })).ok).toBe(true);
    const listed = (await inspectApp({ root: app!.dir, target: 'crons' })) as CronList;
    expect(listed.crons).toEqual([{ name: 'nightly', call: 'purgeOld', schedule: '0 3 * * * (Europe/Berlin)', tenant: null, forEachTenant: null, nextRun: expect.stringMatching(/T0[12]:00:00\.000Z$/) }]);
  });
});
