import { defineCommand } from 'citty';
import { log, printJson } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

// Not `export default defineCommand(…)`: see cli/commands/ai.ts (TypeScript 6 and rewritten `.ts` imports).
const build = defineCommand({
  meta: commandMeta('build'),
  args: {
    root: { type: 'string', description: 'The app directory', default: '.' },
    json: { type: 'boolean', description: 'Print one JSON line { ok, server, web, durationMs }' },
  },
  async run({ args }) {
    const { buildApp } = await import('../../toolchain/build/build.ts');
    const result = await buildApp({ root: args.root });
    for (const note of result.notes) log(`fw build: ${note}`);
    if (args.json) printJson({ ok: true, server: result.server, web: result.web, durationMs: result.durationMs });
    else log(`fw build: server → ${result.server}${result.web ? `, web → ${result.web}` : ''} (${result.durationMs} ms). Run it with fw start.`);
  },
});

export default build;
