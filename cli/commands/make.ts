import path from 'node:path';
import { defineCommand } from 'citty';
import { makeUi } from '../../plugin/make-ui.ts';
import { log, printJson } from '../output.ts';

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

export default defineCommand({
  meta: { name: 'make', description: 'Scaffold parts of an app' },
  subCommands: { ui },
});
