import { defineCommand } from 'citty';
import { describeConfig, formatConfig, renderConfigDocs } from '../../runtime/config/describe-config.ts';
import { resolveConfig } from '../../runtime/config/resolve-config.ts';
import { log, printJson } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

// Not `export default defineCommand(…)`: see cli/commands/ai.ts (TypeScript 6 and rewritten `.ts` imports).
const config = defineCommand({
  meta: commandMeta('config'),
  args: {
    all: { type: 'boolean', description: 'Also list the variables that are unset' },
    json: { type: 'boolean', description: 'Print {"ok",variables:[{name,group,type,value,source,problem?,doc}]}' },
    docs: { type: 'boolean', description: 'Print the Markdown table of every variable (docs/config.md)' },
  },
  run({ args }) {
    if (args.docs) {
      process.stdout.write(renderConfigDocs());
      return { exitCode: 0 };
    }
    const rows = describeConfig(resolveConfig());
    const ok = rows.every((row) => row.problem === undefined);
    if (args.json) printJson({ ok, variables: rows });
    else {
      process.stdout.write(`${formatConfig(rows, { all: Boolean(args.all) })}\n`);
      if (!ok) log('✖ fw config: some variables are malformed (marked ✖); fw refuses to start with them.');
    }
    return { exitCode: ok ? 0 : 1 };
  },
});

export default config;
