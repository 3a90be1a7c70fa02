import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp } from '../../e2e/support/app.ts';
import { runChecks } from './check.ts';

const apps: Array<{ remove(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.remove()));
});

describe('fw check: generated_drift', () => {
  it('reports drift once, naming every drifted file and the one command that fixes it', async () => {
    const app = await createTestApp('minimal-web', {
      'src/queries/countNotes.ts': "import { query, sql } from 'fwjs';\nexport default query({ handler: (ctx) => ctx.db.selectFrom('notes').select(sql<string>`count(*)`.as('n')).execute() });\n",
    }, { insideRepo: true });
    apps.push(app);
    const report = await runChecks({ root: app.dir, typecheck: false });
    const drift = report.diagnostics.filter((d) => d.code === 'generated_drift');
    expect(drift).toHaveLength(1);
    expect(drift[0]).toMatchObject({ file: 'src/fw/_generated/agentContract.json', severity: 'error', suggestedCommand: 'fw generate' });
    expect(drift[0]!.message).toMatch(/^src\/fw\/_generated\/agentContract\.json is out of date\. .* Also out of date: src\/fw\/_generated\/agentTools\.json \(.*\), src\/fw\/_generated\/api\.json/);
    expect(report.checks.find((c) => c.name === 'generated')).toMatchObject({ ok: false, errors: 1 });
  });

  it('passes after a web/ edit that only moves code (the generated files record no line numbers)', async () => {
    const app = await createTestApp('minimal-web', {}, { insideRepo: true });
    apps.push(app);
    const file = path.join(app.dir, 'web/src/App.tsx');
    await writeFile(file, `\n\n\n${await readFile(file, 'utf8')}`);
    const report = await runChecks({ root: app.dir, typecheck: false });
    expect(report.diagnostics.filter((d) => d.code === 'generated_drift')).toEqual([]);
  });
});
