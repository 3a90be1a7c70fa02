import path from 'node:path';
import type { ViteDevServer } from 'vite';
import { type CheckDiagnostic, formatDiagnostic, formatFix } from './analyse/check-diagnostic.ts';
import { createWebSources, isWebFile } from './analyse/frontend/files.ts';
import type { DevRuntime } from './dev-server/dev-runtime.ts';
import { setFwProblem } from './dev-server/fw-problem.ts';
import { fileStamp } from './dev-server/file-stamp.ts';
import { generateFromApp } from './generate/generate.ts';
import type { OverlayError } from './overlay-error.ts';

/**
 * Keeps the frontend artifacts (frontendGraph.json, capabilityMap.json, agentContract.json) in step
 * with edits under web/: an edited file is parsed again (every other file comes from the analysis'
 * content-hash cache), the artifacts are rewritten when they change, and the edited file's frontend
 * diagnostics print in Vite's terminal, errors also in its overlay.
 */
export function watchFrontend(server: ViteDevServer, runtime: DevRuntime): void {
  const logger = server.config.logger;
  // Edits arriving during a pass are folded into one follow-up pass.
  let running: Promise<void> | undefined;
  let queued = new Set<string>();
  // web/ in memory, re-read file by file as the watcher reports edits.
  const sources = createWebSources(runtime.root);
  const pass = async (): Promise<void> => {
    const files = [...queued];
    queued = new Set();
    for (const file of files) sources.changed(file);
    const stamp = (file: string) => fileStamp(path.join(runtime.root, file));
    const before = new Map(files.map((file) => [file, stamp(file)]));
    const result = await generateFromApp(runtime.app(), { root: runtime.root, frontend: { sources } });
    // A file that changed while it was analysed (caught mid-write) goes round once more, and its
    // findings, about a half-written file, are not shown.
    const settled = new Set(files.filter((file) => stamp(file) === before.get(file)));
    for (const file of files) if (!settled.has(file)) queued.add(file);
    const relevant = result.checks.filter((d) => settled.has(d.file) && d.severity !== 'info');
    for (const d of relevant) report(server, d);
    for (const file of settled) remember(file, relevant.find((d) => d.file === file && d.severity === 'error'));
    const firstError = relevant.find((d) => d.severity === 'error');
    if (firstError) server.ws.send({ type: 'error', err: overlayOf(runtime.root, firstError) });
  };
  // Each file's first error finding, while it lasts: fw's problem of the moment (fw-problem.ts).
  const findings = new Map<string, CheckDiagnostic>();
  const remember = (file: string, finding: CheckDiagnostic | undefined) => {
    if (finding) findings.set(file, finding);
    else findings.delete(file);
    const first = findings.values().next().value;
    setFwProblem(runtime.root, 'frontend', first ? overlayOf(runtime.root, first) : undefined);
  };
  const schedule = (file: string) => {
    queued.add(path.relative(runtime.root, file).split(path.sep).join('/'));
    if (running) return;
    running = (async () => {
      try {
        while (queued.size > 0) await pass();
      } catch (error) {
        logger.error(`fw: frontend analysis failed: ${error instanceof Error ? error.message : String(error)}`, { timestamp: true });
      } finally {
        running = undefined;
      }
    })();
  };
  server.watcher.on('all', (_event, file) => {
    if (isWebFile(runtime.root, file)) schedule(file);
  });

  const initial = runtime.diagnostics().filter((d): d is CheckDiagnostic => 'suggestedCommand' in d && d.severity !== 'info');
  for (const d of initial) report(server, d);
  for (const d of initial) if (d.severity === 'error' && !findings.has(d.file)) remember(d.file, d);
  // A page that opens meets the finding in the overlay (the terminal said it at start, before any page).
  server.ws.on('connection', (socket) => {
    const first = findings.values().next().value;
    if (first) socket.send(JSON.stringify({ type: 'error', err: overlayOf(runtime.root, first) }));
  });
}

function report(server: ViteDevServer, d: CheckDiagnostic): void {
  const line = `fw: ${formatDiagnostic(d)}`;
  if (d.severity === 'error') server.config.logger.error(line, { timestamp: true });
  else server.config.logger.warn(line, { timestamp: true });
}

/** A finding as the overlay shows it: its code, message and fix ("Did you mean 'completeTask'?"), linked to its place. */
function overlayOf(root: string, d: CheckDiagnostic): OverlayError {
  return {
    message: [`${d.code}: ${d.message}`, ...formatFix(d, '')].join('\n'),
    stack: '',
    plugin: 'fw',
    id: path.join(root, d.file),
    loc: { file: path.join(root, d.file), line: d.line, column: d.column },
  };
}
