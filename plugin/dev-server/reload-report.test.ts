import { describe, expect, it } from 'vitest';
import type { ReloadOutcome } from './dev-runtime.ts';
import { reportReloads } from './reload-report.ts';

/** Lets every `then` queued so far run. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('reportReloads', () => {
  it('reports a run once, with every file whose events it covered (a new file is rename + change)', async () => {
    const reports: Array<[boolean, readonly string[]]> = [];
    const report = reportReloads((outcome, files) => reports.push([outcome.ok, files]));
    const run: ReloadOutcome = { ok: true, app: {} as never, migrated: [] };
    report('/app/src/commands/a.ts', Promise.resolve(run));
    report('/app/src/commands/a.ts', Promise.resolve(run));
    report('/app/src/queries/b.ts', Promise.resolve(run));
    await settled();
    expect(reports).toEqual([[true, ['/app/src/commands/a.ts', '/app/src/queries/b.ts']]]);
  });

  it('a folded follow-up with no new file is reported only when it failed', async () => {
    const reports: Array<[boolean, readonly string[]]> = [];
    const report = reportReloads((outcome, files) => reports.push([outcome.ok, files]));
    const first: ReloadOutcome = { ok: true, app: {} as never, migrated: [] };
    let finishFollowUp!: (outcome: ReloadOutcome) => void;
    report('/app/src/a.ts', Promise.resolve(first));
    report('/app/src/a.ts', new Promise((resolve) => (finishFollowUp = resolve)));
    await settled();
    finishFollowUp({ ok: true, app: {} as never, migrated: [] });
    await settled();
    expect(reports).toEqual([[true, ['/app/src/a.ts']]]);

    let failFollowUp!: (outcome: ReloadOutcome) => void;
    report('/app/src/b.ts', Promise.resolve({ ok: true, app: {} as never, migrated: [] }));
    report('/app/src/b.ts', new Promise((resolve) => (failFollowUp = resolve)));
    await settled();
    failFollowUp({ ok: false, error: new Error('half-written') });
    await settled();
    expect(reports.slice(1)).toEqual([[true, ['/app/src/b.ts']], [false, []]]);
  });
});
