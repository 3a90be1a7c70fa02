import path from 'node:path';
import { defineCommand } from 'citty';
import { runDevOnce } from '../../toolchain/dev/dev-once.ts';
import { startDev } from '../../toolchain/dev/dev-server.ts';
import { bindDevKeys, openBrowser } from '../../toolchain/dev/open-browser.ts';
import { parseAllowedHosts } from '../../plugin/dev-server/host-check.ts';
import { reloadedLine } from '../../plugin/dev-server/reload-report.ts';
import { formatFix } from '../../plugin/analyse/check-diagnostic.ts';
import { log, printFailure, printJson, toFailureReport, untilSignal } from '../output.ts';
import { createStatusLine } from '../progress.ts';
import { commandMeta } from '../command-meta.ts';

export default defineCommand({
  meta: commandMeta('dev'),
  args: {
    'api-only': { type: 'boolean', description: 'Serve only the API runtime' },
    'web-only': { type: 'boolean', description: 'Serve only the web dev server (it serves the API routes too)' },
    watch: { type: 'boolean', description: 'Reload backend files on change (--no-watch to disable)', default: true },
    worker: { type: 'boolean', description: 'Run the outbox worker that delivers events to actions (--no-worker to disable)', default: true },
    typecheck: { type: 'boolean', description: "Typecheck the app (tsconfig.json, web/tsconfig.json) in the background: type errors in the terminal as they appear and clear, and in Vite's overlay (--no-typecheck to disable)", default: true },
    once: { type: 'boolean', description: 'One pass: generate, check, start, probe /health, stop; print a report' },
    port: { type: 'string', description: 'API port (0 picks a free one)', default: '3100' },
    'web-port': { type: 'string', description: 'Web port (the next free one when busy)', default: '5173' },
    host: { type: 'string', description: 'Interface to listen on', default: '127.0.0.1' },
    'allowed-hosts': { type: 'string', description: 'Host names the dev ports answer besides localhost and IPs, comma-separated (".example.test": and subdomains; "true": any); default FW_ALLOWED_HOSTS' },
    root: { type: 'string', description: 'The app directory', default: '.' },
    json: { type: 'boolean', description: 'Print one JSON line with "serverUrl" (and "webUrl") once serving' },
    open: { type: 'boolean', description: 'Open the dashboard in the browser once serving (BROWSER chooses the browser; on a terminal, d + enter opens it too)' },
  },
  async run({ args }) {
    const root = path.resolve(args.root);
    if (args.once) {
      const report = await runDevOnce({ root });
      if (args.json) printJson(report);
      else {
        for (const step of report.steps) {
          log(`${step.ok ? '✔' : '✖'} ${step.name} (${step.durationMs} ms)${step.error ? `: ${step.error}` : ''}`);
          for (const suggestion of step.suggestions ?? []) log(`  → ${suggestion}`);
        }
        for (const d of report.diagnostics) {
          log(`${d.path} ${d.severity} ${d.code} ${d.message}`);
          for (const line of formatFix(d)) log(line);
        }
      }
      return { exitCode: report.ok ? 0 : 1 };
    }
    let lastFailure: string | undefined;
    // Listened for from here on: a signal while starting stops fw dev once started, with its children
    // (Vite, services, the worker) closed, instead of ending the process around them.
    const stopped = untilSignal();
    // The first start can take a while (the embedded database, migrations, Vite's first build): after
    // 2 s it says what it is doing — on a terminal one status line below anything printed meanwhile;
    // piped (CI, an IDE task, a coding agent; --json too, on stderr) a plain line per step and every few
    // seconds, so it is never silent for long.
    const status = createStatusLine(process.stderr, { intercept: process.stdout.isTTY === true ? [process.stderr, process.stdout] : [process.stderr] });
    status.set('fw dev: starting');
    const session = await startDev({
      root,
      port: parsePort(args.port, '--port'),
      webPort: parsePort(args['web-port'], '--web-port'),
      host: args.host,
      ...(args['allowed-hosts'] !== undefined ? { allowedHosts: parseAllowedHosts(args['allowed-hosts']) } : {}),
      apiOnly: Boolean(args['api-only']),
      webOnly: Boolean(args['web-only']),
      watch: args.watch !== false,
      worker: args.worker !== false,
      typecheck: args.typecheck !== false,
      viteLogLevel: args.json ? 'warn' : 'info',
      onStep: (step: string) => status.set(`fw dev: ${step}`),
      onReload: (outcome, files) => {
        if (outcome.ok) {
          lastFailure = undefined;
          log(
            reloadedLine(
              files.map((f) => path.relative(root, f)),
              outcome.migrated,
            ),
          );
          return;
        }
        // One save often fires several watch events: the same failure is reported once.
        const report = JSON.stringify(toFailureReport(outcome.error));
        if (report !== lastFailure) printFailure(outcome.error, false);
        lastFailure = report;
      },
    }).finally(() => status.end());
    // The dashboard is served by the runtime, on the API port (or the web port that serves it).
    const runtimeUrl = session.serverUrl ?? session.webUrl;
    const dashboardUrl = runtimeUrl ? `${runtimeUrl}/_fw/dashboard/` : undefined;
    const summary = { ok: true, ...(session.serverUrl ? { serverUrl: session.serverUrl } : {}), ...(session.webUrl ? { webUrl: session.webUrl } : {}), ...(dashboardUrl ? { dashboardUrl } : {}), ...session.summary };
    // On a terminal, `d` + enter opens the dashboard (as Vite's own keys are read: a line at a time).
    const open = dashboardUrl ? () => openBrowser(dashboardUrl, { log }) : undefined;
    const stopKeys = open ? bindDevKeys([{ key: 'd', description: 'open the dashboard', action: open }]) : undefined;
    if (args.json) printJson(summary);
    else {
      const where = session.webUrl && session.webUrl === session.serverUrl ? `web and API on ${session.webUrl} ` : `${session.webUrl ? `web on ${session.webUrl}, ` : ''}${session.serverUrl ? `API on ${session.serverUrl} ` : ''}`;
      log(`fw dev: ${where}(${summary.database}, ${summary.entries} entries). Ctrl-C to stop.`);
      if (summary.services?.length) log(`fw dev: started ${summary.services.join(', ')} (service.dev in its manifest); its output is prefixed with its name.`);
      if (dashboardUrl) log(`fw dev: dashboard on ${dashboardUrl}${stopKeys ? ' (press d + enter to open it)' : ''}`);
    }
    if (args.open) open?.();
    await stopped;
    stopKeys?.();
    await session.close();
  },
});

function parsePort(value: string, flag: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`${flag} must be 0–65535, got "${value}".`);
  return port;
}
