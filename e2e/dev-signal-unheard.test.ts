import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, type RunningFw, startFw } from './support/app.ts';
import { until } from './support/until.ts';

const devAuth = { 'x-fw-user-id': 'user-1', 'x-fw-tenant-id': '00000000-0000-4000-8000-000000000001', 'x-fw-role': 'member' };

// #45.7: a signal that no run waits for (sent before the run got to its ctx.waitForEvent, or with a
// payload its match does not contain) wakes nothing — fw's semantics, as Inngest's — and says so
// where the developer looks: the terminal and the dashboard's Logs view, not only a note on its
// outbox row that no view showed.
describe('a signal no workflow run waits for, in fw dev', () => {
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let dev: RunningFw;
  let url: string;

  beforeAll(async () => {
    app = await createTestApp('minimal-web', {
      'src/commands/approveOrder.ts': [
        "import { command, z } from 'fwjs';",
        '',
        'export default command({',
        "  policy: 'user',",
        '  args: { orderId: z.string() },',
        "  handler: async (ctx, args) => ctx.signal('order.approved', { orderId: args.orderId }),",
        '});',
        '',
      ].join('\n'),
    });
    dev = await startFw(['dev', '--api-only', '--port', '0', '--json'], { cwd: app.dir });
    url = dev.ready.serverUrl as string;
  }, 120_000);
  afterAll(async () => {
    await dev?.stop();
    await app?.remove();
  });

  it('is said in the terminal and the Logs view, with its trace', async () => {
    const sent = await post(url, '/commands/approveOrder', { orderId: 'order-41' }, devAuth);
    expect(sent.status).toBe(200);
    const expected = `fw: signal "order.approved" woke no workflow run (outbox #`;
    const line = await until(async () => dev.stderr().split('\n').find((l) => l.startsWith(expected) && l.includes(sent.body.traceId)), 'the terminal line');
    expect(line).toMatch(
      new RegExp(
        `^fw: signal "order\\.approved" woke no workflow run \\(outbox #\\d+, trace ${sent.body.traceId}\\): No workflow run of this tenant waited for signal "order\\.approved" with a matching payload\\. A run gets the signals sent while it waits \\(ctx\\.waitForEvent\\), not one sent before it got there\\.$`,
      ),
    );
    const logs = (await (await fetch(`${url}/_fw/dashboard/api/logs`)).json()) as { lines: Array<{ level: string; text: string }> };
    expect(logs.lines.filter((l) => l.text === line)).toEqual([expect.objectContaining({ level: 'warn', text: line })]);
  });
});
