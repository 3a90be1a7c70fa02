/**
 * Files added to minimal-web for the dashboard tests: an entry that fails, an event no action accepts, a
 * workflow, a call scheduled for later, a cron, and workflows that sleep or wait for a signal.
 */
export const dashboardAppFiles: Record<string, string> = {
  'src/commands/failNote.ts': `import { command, z } from 'fwjs';
export default command({
  description: 'Always fails, to show an error with its place.',
  args: { title: z.string() },
  handler: async () => {
    throw new Error('the note could not be filed');
  },
});
`,
  'src/commands/emitBad.ts': `import { command } from 'fwjs';
export default command({
  description: 'Emits an event whose payload its action refuses (dead-lettered at once).',
  handler: async (ctx) => {
    ctx.emit('note.bad', { nope: true });
    return { emitted: true };
  },
});
`,
  'src/actions/onBad.ts': `import { action, z } from 'fwjs';
export default action({
  on: 'note.bad',
  args: { title: z.string() },
  handler: async () => {},
});
`,
  'src/workflows/greet.ts': `import { workflow, z } from 'fwjs';
export default workflow({
  args: { name: z.string() },
  handler: async (ctx, args) => {
    const greeting = await ctx.step('compose', async () => 'hello ' + args.name);
    await ctx.step('deliver', async () => null);
    return { greeting };
  },
});
`,
  'src/commands/startGreet.ts': `import { command, z } from 'fwjs';
export default command({
  args: { name: z.string() },
  handler: async (ctx, args) => ctx.startWorkflow('greet', { name: args.name }),
});
`,
  'src/commands/sendReminder.ts': `import { command, z } from 'fwjs';
export default command({
  description: 'What a reminder does when its time comes.',
  args: { text: z.string() },
  handler: async (_ctx, args) => ({ reminded: args.text }),
});
`,
  'src/commands/remindLater.ts': `import { command, z } from 'fwjs';
export default command({
  description: 'Schedules sendReminder in an hour.',
  args: { text: z.string() },
  handler: async (ctx, args) => ({ callId: await ctx.scheduler.runAfter(3_600_000, 'sendReminder', { text: args.text }) }),
});
`,
  'src/commands/remindInDays.ts': `import { command, z } from 'fwjs';
export default command({
  description: 'Schedules sendReminder in some days.',
  args: { text: z.string(), days: z.number().int().min(1) },
  handler: async (ctx, args) => ({ callId: await ctx.scheduler.runAfter(args.days * 86_400_000, 'sendReminder', { text: args.text }) }),
});
`,
  'src/commands/sendDigest.ts': `import { command } from 'fwjs';
export default command({
  policy: 'system',
  description: 'The hourly cron calls it.',
  handler: async () => ({ sent: true }),
});
`,
  'src/crons.ts': `import { crons } from 'fwjs';
export default crons({
  hourlyDigest: { every: '1h', call: 'sendDigest' },
});
`,
  'src/workflows/nap.ts': `import { workflow, z } from 'fwjs';
export default workflow({
  args: { name: z.string() },
  handler: async (ctx, args) => {
    await ctx.step('wake-up', async () => args.name);
    await ctx.sleep('nap', '1h');
    await ctx.step('after-nap', async () => null);
  },
});
`,
  'src/workflows/awaitApproval.ts': `import { workflow, z } from 'fwjs';
export default workflow({
  args: { orderId: z.string() },
  handler: async (ctx, args) => {
    await ctx.waitForEvent('approval', 'order.approved', { match: { orderId: args.orderId }, timeout: '2d' });
  },
});
`,
  'src/commands/startWaits.ts': `import { command, z } from 'fwjs';
export default command({
  args: { name: z.string() },
  handler: async (ctx, args) => ({
    nap: await ctx.startWorkflow('nap', { name: args.name }),
    approval: await ctx.startWorkflow('awaitApproval', { orderId: args.name }),
  }),
});
`,
};
