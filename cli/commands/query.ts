import { defineCommand } from 'citty';
import { callArgs, runExternal } from './run.ts';
import { commandMeta } from '../command-meta.ts';

const query = defineCommand({
  meta: commandMeta('query'),
  args: { name: { type: 'positional', description: '<service>.<query>', required: true }, ...callArgs },
  run: ({ args }) => runExternal('query', args.name, args),
});

export default query;
