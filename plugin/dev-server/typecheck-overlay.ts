import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Plugin, ViteDevServer } from 'vite';
import type { OverlayError } from '../overlay-error.ts';
import { fwProblem } from './fw-problem.ts';
import type { TypeDiagnostic } from './typecheck.ts';

/** The part of Vite's dev server the overlay needs (`server.ws`), typed here so tests can pass a recorder. */
export interface HotChannel {
  send(payload: TypeOverlayPayload): void;
  /** The pages connected now (`server.ws.clients.size`). */
  connected(): number;
  /** Calls `listener` for each page that connects from now on, with a way to reach that page alone. */
  onConnection(listener: (sendToPage: (payload: TypeOverlayPayload) => void) => void): void;
}

/**
 * What is sent: the errors (`error`, shown by Vite's overlay), or, once they are fixed, what makes the
 * overlay go: an empty `update` (Vite's client clears its overlay before applying any update) to the
 * pages open, or, when none is, a `full-reload` that replaces the error Vite keeps for the next page.
 */
export type TypeOverlayPayload = { type: 'error'; err: OverlayError } | { type: 'update'; updates: [] } | { type: 'full-reload'; path: '*' };

/** How many errors the overlay lists (the terminal and `fw check` have them all). */
const listed = 20;

/**
 * Feeds the typecheck's results to Vite's error overlay, as vite-plugin-checker does: every result with
 * errors shows them (again after a page update has cleared the overlay while they remain), and so does
 * each page that opens or reloads meanwhile; the first clean result after errors clears it; a clean
 * result otherwise sends nothing. It runs on the typecheck's results, never on a request.
 *
 * @example
 *   const overlay = viteOverlayChannel();
 *   startTypecheck({ root, log, onResult: typeOverlay(root, overlay.channel) });
 */
export function typeOverlay(root: string, hot: HotChannel, readSource: (file: string) => string = (file) => readFileSync(file, 'utf8')): (diagnostics: readonly TypeDiagnostic[]) => void {
  let typeErrors: OverlayError | undefined;
  // fw's own problem of the moment (fw-problem.ts) comes first, above the type errors.
  const showing = (): { type: 'error'; err: OverlayError } => ({ type: 'error', err: fwProblemFirst(fwProblem(root), typeErrors!) });
  // Vite keeps an error sent while no page is open and gives it to the next page that connects.
  let kept = false;
  hot.onConnection((sendToPage) => {
    kept = false;
    if (typeErrors) sendToPage(showing());
  });
  return (diagnostics) => {
    if (diagnostics.length > 0) {
      typeErrors = typeOverlayError(root, diagnostics, readSource);
      kept = hot.connected() === 0;
      hot.send(showing());
    } else if (typeErrors) {
      typeErrors = undefined;
      const problem = fwProblem(root);
      // The type errors are fixed, fw's problem is not: it stays.
      if (problem) hot.send({ type: 'error', err: problem });
      else if (hot.connected() > 0) hot.send({ type: 'update', updates: [] });
      // Replaces the error Vite keeps, so the next page does not open on fixed errors (it reloads once).
      else if (kept) hot.send({ type: 'full-reload', path: '*' });
      kept = false;
    }
  };
}

/** The part of a Vite dev server's websocket the overlay uses. */
type ViteWs = Pick<ViteDevServer['ws'], 'send' | 'clients' | 'on'>;

/**
 * The overlay's channel to a Vite dev server, and the plugin that keeps it there: Vite's restart (a
 * vite.config or nuxt.config edit) replaces the server's websocket, and listeners put on the old one
 * would never hear a page again. The plugin's `configureServer` runs on every (re)start and moves the
 * channel to the server's websocket of the moment (`attach` does the same from another plugin's hook).
 *
 * @example
 *   const overlay = viteOverlayChannel();
 *   await createServer({ plugins: [overlay.plugin] });
 *   startTypecheck({ root, log, onResult: typeOverlay(root, overlay.channel) });
 */
export function viteOverlayChannel(): { channel: HotChannel; attach(server: { ws: ViteWs }): void; plugin: Plugin } {
  let ws: ViteWs | undefined;
  const listeners: Array<Parameters<HotChannel['onConnection']>[0]> = [];
  const listen = (socketServer: ViteWs, listener: Parameters<HotChannel['onConnection']>[0]) =>
    socketServer.on('connection', (socket) => listener((payload) => socket.send(JSON.stringify(payload))));
  const attach = (server: { ws: ViteWs }) => {
    ws = server.ws;
    for (const listener of listeners) listen(server.ws, listener);
  };
  return {
    attach,
    channel: {
      send: (payload) => ws?.send(payload),
      connected: () => ws?.clients.size ?? 0,
      onConnection: (listener) => {
        listeners.push(listener);
        if (ws) listen(ws, listener);
      },
    },
    plugin: {
      name: 'fw:type-overlay',
      apply: 'serve',
      configureServer: attach,
    },
  };
}

/** fw's problem with the type errors under it, its place the overlay's link (or the type errors alone). */
function fwProblemFirst(problem: OverlayError | undefined, typeErrors: OverlayError): OverlayError {
  if (!problem) return typeErrors;
  return { ...problem, message: `${problem.message}\n\n${typeErrors.message}`, stack: [problem.stack, typeErrors.stack].filter(Boolean).join('\n') };
}

/**
 * The overlay's error for a set of type errors: the count and each error (`src/a.ts:2:7 TS2322 …`) as
 * its message, the first one's place as its link with a code frame, and every place as an absolute
 * `file:line:column` in its stack, which the overlay turns into links that open the editor.
 */
export function typeOverlayError(root: string, diagnostics: readonly TypeDiagnostic[], readSource: (file: string) => string): OverlayError {
  const files = new Set(diagnostics.map((d) => d.file)).size;
  const shown = diagnostics.slice(0, listed);
  const more = diagnostics.length - shown.length;
  const message = [
    `${plural(diagnostics.length, 'type error')} in ${plural(files, 'file')} (fw dev's typecheck; the page still runs)`,
    ...shown.map((d) => `${placeOf(d)} ${d.code ? `TS${d.code} ` : ''}${d.message.split('\n').join('\n    ')}`),
    ...(more > 0 ? [`… and ${more} more (fw check lists them all)`] : []),
  ].join('\n');
  const stack = shown.map((d) => `    at ${path.resolve(root, d.file)}${d.line === undefined ? '' : `:${d.line}:${d.column ?? 1}`}`).join('\n');
  const first = diagnostics[0]!;
  if (first.line === undefined) return { message, stack, plugin: 'fw' };
  const file = path.resolve(root, first.file);
  const frame = codeFrame(file, first.line, first.column ?? 1, readSource);
  return { message, stack, plugin: 'fw', id: file, loc: { file, line: first.line, column: first.column ?? 1 }, ...(frame ? { frame } : {}) };
}

/**
 * Two lines either side of `line`, numbered, with a caret under `column`, in the shape of Vite's own
 * frames (each line starts with its number: the overlay trims the frame's leading spaces); undefined
 * when the file cannot be read.
 */
export function codeFrame(file: string, line: number, column: number, readSource: (file: string) => string): string | undefined {
  let lines: string[];
  try {
    lines = readSource(file).split(/\r?\n/);
  } catch {
    return undefined;
  }
  const from = Math.max(1, line - 2);
  const to = Math.min(lines.length, line + 2);
  const width = String(to).length;
  const out: string[] = [];
  for (let n = from; n <= to; n++) {
    out.push(`${String(n).padEnd(width)} | ${lines[n - 1] ?? ''}`);
    if (n === line) out.push(`${' '.repeat(width)} | ${' '.repeat(Math.max(0, column - 1))}^`);
  }
  return out.join('\n');
}

function placeOf(d: TypeDiagnostic): string {
  return d.line === undefined ? d.file : `${d.file}:${d.line}:${d.column ?? 1}`;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
