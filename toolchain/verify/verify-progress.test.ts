import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../../e2e/support/app.ts';
import { type GateName, type GateResult, verify } from './verify.ts';

describe('verify reports each gate as it runs', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  afterAll(() => app?.remove());

  it('calls onGateStart and onGate in gate order, before the report', { timeout: 120_000 }, async () => {
    app = await createTestApp('minimal-web', {}, { insideRepo: true });
    // No tsconfig: the typecheck gate skips, which keeps this test quick.
    await rm(path.join(app.dir, 'tsconfig.json'));
    const events: string[] = [];
    const report = await verify({
      root: app.dir,
      level: 'smoke',
      onGateStart: (name: GateName) => events.push(`start ${name}`),
      onGate: (gate: GateResult) => events.push(`${gate.status} ${gate.name}`),
    });
    expect(events).toEqual(report.gates.flatMap((g) => [`start ${g.name}`, `${g.status} ${g.name}`]));
    expect(report.gates.map((g) => g.name)).toEqual(['generated', 'check', 'typecheck', 'boot']);
  });
});
