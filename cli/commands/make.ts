import path from 'node:path';
import { defineCommand } from 'citty';
import { makeAiChat } from '../../toolchain/make/make-ai-chat.ts';
import { makeUi } from '../../toolchain/make/make-ui.ts';
import { log, printJson } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

const ui = defineCommand({
  meta: { name: 'ui', description: 'Scaffold web/ (React + Vite, or Nuxt) wired to the app’s entries' },
  args: {
    framework: { type: 'string', description: 'vite (React) or nuxt (Vue)', required: true },
    'dry-run': { type: 'boolean', description: 'List the files it would write; write nothing' },
    yes: { type: 'boolean', description: 'Replace an existing web/ (removed first)' },
    root: { type: 'string', description: 'The app directory', default: '.' },
    json: { type: 'boolean', description: 'Print one JSON document' },
  },
  async run({ args }) {
    const made = await makeUi({ root: args.root, framework: args.framework, dryRun: Boolean(args['dry-run']), yes: Boolean(args.yes) });
    if (args.json) printJson({ ok: true, ...made });
    else {
      log(`${made.dryRun ? 'Would write' : 'Wrote'} a ${made.framework} UI in ${path.resolve(args.root, 'web')}:`);
      for (const file of made.files) log(`  ${file}`);
      if (!made.dryRun) log('Next: npm install && npx fw dev');
    }
  },
});

const aiChat = defineCommand({
  meta: { name: 'ai-chat', description: 'Scaffold an agent (src/ai/agents/) and a React chat component with tool approvals' },
  args: {
    // Checked by makeAiChat, so a missing name fails as invalid_name rather than as a parse error.
    agent: { type: 'positional', description: 'The agent name, e.g. support (support-bot becomes supportBot)', required: false },
    'dry-run': { type: 'boolean', description: 'List the files it would write; write nothing' },
    yes: { type: 'boolean', description: 'Replace the agent and component files when they exist' },
    root: { type: 'string', description: 'The app directory', default: '.' },
    json: { type: 'boolean', description: 'Print one JSON document' },
  },
  async run({ args }) {
    const made = await makeAiChat({ root: args.root, agent: args.agent ?? '', dryRun: Boolean(args['dry-run']), yes: Boolean(args.yes) });
    if (args.json) printJson({ ok: true, ...made });
    else {
      log(`${made.dryRun ? 'Would write' : 'Wrote'} the ${made.agent} agent in ${path.resolve(args.root)}:`);
      for (const file of made.files) log(`  ${file}`);
      for (const note of made.notes ?? []) log(`Note: ${note}`);
      if (!made.dryRun) for (const step of made.next) log(`Next: ${step}`);
    }
  },
});

export default defineCommand({
  meta: commandMeta('make'),
  subCommands: { ui, 'ai-chat': aiChat },
});
