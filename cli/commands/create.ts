import { defineCommand } from 'citty';
import { createApp } from '../../toolchain/create/create-app.ts';
import { log, printJson } from '../output.ts';
import { startActivity } from '../progress.ts';
import { commandMeta } from '../command-meta.ts';

export default defineCommand({
  meta: commandMeta('create'),
  args: {
    dir: { type: 'positional', description: 'Directory for the new app (must not exist or be empty)', required: true },
    template: { type: 'string', description: 'Template: minimal-web (React + Vite), nuxt-web (Vue + Nuxt) or b2b-support-web (multi-tenant support desk, React + Vite)', default: 'minimal-web' },
    'fw-spec': { type: 'string', description: 'npm spec for the fwjs dependency, e.g. ^0.1.0 or file:fwjs-0.1.0.tgz (default: this fw)' },
    install: { type: 'boolean', description: 'Install dependencies after creating' },
    json: { type: 'boolean', description: 'Print one JSON document' },
  },
  async run({ args }) {
    const created = await createApp({
      dir: args.dir,
      template: args.template,
      ...(args['fw-spec'] ? { fwSpec: args['fw-spec'] } : {}),
      install: Boolean(args.install),
      // Said while it runs (an install takes a while, and the app's .npmrc keeps npm to its errors), on
      // stderr: a status line on a terminal; plain lines elsewhere and with --json (stdout stays one
      // document), a reminder every few seconds while npm says nothing.
      reportInstall: (command) => {
        const stream = args.json ? { isTTY: false, write: (text: string) => process.stderr.write(text) } : process.stderr;
        const activity = startActivity(`Installing dependencies (${command})`, stream);
        return {
          line: activity.print,
          end: (ok) => activity.end(ok ? `Installed dependencies (${command}) in ${activity.elapsed()}.` : `${command} failed after ${activity.elapsed()}.`),
        };
      },
    });
    if (args.json) printJson({ ok: true, ...created });
    else {
      log(`Created ${created.template} app in ${created.dir}`);
      log(created.installed ? `Next: cd ${args.dir} && npx fw dev` : `Next: cd ${args.dir} && npm install && npx fw dev`);
    }
  },
});
