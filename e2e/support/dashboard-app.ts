/** Files added to minimal-web for the dashboard tests: an entry that fails, an event no action accepts, a workflow. */
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
};
