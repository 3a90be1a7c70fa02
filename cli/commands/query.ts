import { defineCommand } from 'citty';
import { callArgs, runExternal } from './run.ts';

const query = defineCommand({
  meta: { name: 'query', description: 'Call an external query: fw query <service.query> --args <json>' },
  args: { name: { type: 'positional', description: '<service>.<query>', required: true }, ...callArgs },
  run: ({ args }) => runExternal('query', args.name, args),
});

export default query;
