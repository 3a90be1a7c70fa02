import { existsSync } from 'node:fs';
import path from 'node:path';
import { defineCommand } from 'citty';
import { startApiServer } from '../../plugin/api-server.ts';
import { log, printJson, untilSignal } from '../output.ts';

export default defineCommand({
  meta: { name: 'dev', description: 'Start the API runtime for the app in development mode' },
  args: {
    'api-only': { type: 'boolean', description: 'Serve only the API runtime (no web dev server)' },
    port: { type: 'string', description: 'API port (0 picks a free one)', default: '3100' },
    host: { type: 'string', description: 'Interface to listen on', default: '127.0.0.1' },
    root: { type: 'string', description: 'The app directory', default: '.' },
    json: { type: 'boolean', description: 'Print one JSON line with "serverUrl" once serving' },
  },
  async run({ args }) {
    const root = path.resolve(args.root);
    const port = Number(args.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`--port must be 0–65535, got "${args.port}".`);
    if (!args['api-only'] && existsSync(path.join(root, 'web'))) {
      log('fw: the web dev server is not part of this build yet; serving the API only.');
    }
    const server = await startApiServer({ root, port, host: args.host, dev: true });
    if (args.json) printJson({ ok: true, serverUrl: server.url, database: server.db.dialect, entries: server.app.entries.size });
    else log(`fw dev: API on ${server.url} (${server.db.dialect}, ${server.app.entries.size} entries). Ctrl-C to stop.`);
    await untilSignal();
    await server.close();
  },
});
