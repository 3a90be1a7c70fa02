import { defineCommand } from 'citty';
import { log, printJson, untilSignal } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

// Not `export default defineCommand(…)`: see cli/commands/ai.ts (TypeScript 6 and rewritten `.ts` imports).
const start = defineCommand({
  meta: commandMeta('start'),
  args: {
    port: { type: 'string', description: 'Port (0 picks a free one; default PORT or 3000)' },
    host: { type: 'string', description: 'Interface to listen on', default: '0.0.0.0' },
    migrate: { type: 'boolean', description: 'Apply pending additive migrations before serving' },
    worker: { type: 'boolean', description: 'Run the outbox worker in this process (--no-worker to disable)', default: true },
    root: { type: 'string', description: 'The app directory', default: '.' },
    json: { type: 'boolean', description: 'Print one JSON line {"ok":true,"serverUrl",…} once serving; logs go to stderr' },
  },
  async run({ args }) {
    const { startProduction } = await import('../../toolchain/start/start.ts');
    const { resolveConfig } = await import('../../runtime/config/resolve-config.ts');
    const port = args.port === undefined ? resolveConfig().get('PORT') : Number(args.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`--port must be 0–65535, got "${args.port}".`);
    const server = await startProduction({ root: args.root, port, host: args.host, migrate: Boolean(args.migrate), worker: args.worker !== false });
    const { aiSetupLine } = await import('../../runtime/ai/models.ts');
    const summary = { ok: true, serverUrl: server.url, database: server.db.dialect, entries: server.app.entries.size, worker: Boolean(server.worker), web: server.web, ai: server.ai };
    if (args.json) printJson(summary);
    else log(`fw start: serving on ${server.url} (${summary.database}, ${summary.entries} entries${server.web ? ', web' : ''}${server.worker ? ', worker' : ''}).`);
    // On stderr with --json too: an operator reads the log, whatever reads stdout.
    log(`fw start: ${aiSetupLine(server.ai).text}`);
    const signal = await untilSignal();
    log(`fw start: ${signal}: finishing in-flight requests, then stopping.`);
    await server.close();
    log('fw start: stopped.');
  },
});

export default start;
