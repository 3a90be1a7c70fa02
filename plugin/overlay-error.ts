import path from 'node:path';
import type { Diagnostic } from '../runtime/core/errors.ts';
import { type FwError, isFwError } from '../runtime/core/errors.ts';
import { FwFailure } from '../runtime/core/failure.ts';
import { AppLoadError } from './app-load-error.ts';

type Located = Diagnostic & { file?: string; line?: number; column?: number };

/** What Vite's error overlay is sent for a backend failure (`server.ws.send({ type: 'error', err })`). */
export interface OverlayError {
  message: string;
  stack: string;
  plugin: 'fw';
  /** The file to open (absolute), and where in it. */
  id?: string;
  loc?: { file: string; line: number; column: number };
}

/**
 * A backend failure (a reload's, or a request's 5xx with its `traceId`) as Vite's overlay shows it: the whole story in the message (every diagnostic with
 * its place and fix, then what to run), and the first place that is known as the overlay's link.
 * The same text goes to the terminal.
 */
export function overlayError(root: string, error: unknown, traceId?: string): OverlayError {
  const message = isFwError(error) ? requestErrorText(error, traceId) : failureText(error);
  const place = firstPlace(error);
  if (!place) return { message, stack: '', plugin: 'fw' };
  const file = path.resolve(root, place.file);
  return { message, stack: '', plugin: 'fw', id: file, loc: { file, line: place.line, column: place.column } };
}

/** A failure as lines: its message, one line per diagnostic (place, message) and its fix, then suggestions. */
export function failureText(error: unknown): string {
  if (error instanceof AppLoadError) return [error.message, ...new Set(error.problems.flatMap((p) => (p.hint ? [`    fix: ${p.hint}`] : [])))].join('\n');
  if (!(error instanceof FwFailure)) return error instanceof Error ? error.message : String(error);
  const lines = [error.message];
  for (const d of error.diagnostics as Located[]) {
    const where = d.file ? ` (${d.file}${d.line ? `:${d.line}:${d.column ?? 1}` : ''})` : '';
    lines.push(`  • ${d.path}${where}: ${d.message}`);
    if (d.hint) lines.push(`    fix: ${d.hint}`);
  }
  for (const suggestion of error.suggestions) lines.push(`  → ${suggestion}`);
  return lines.join('\n');
}

/** A request's server-side failure (runtime/entry/failure-place.ts says where): code, trace id, message, diagnostics. */
function requestErrorText(error: FwError, traceId: string | undefined): string {
  const lines = [`${error.code}${traceId ? ` [trace ${traceId}]` : ''}: ${error.message}`];
  for (const d of error.diagnostics) lines.push(`  • ${d.path}: ${d.message}`);
  return lines.join('\n');
}

function firstPlace(error: unknown): { file: string; line: number; column: number } | undefined {
  if (isFwError(error)) {
    // A diagnostic whose path is a place in the app's files (`src/commands/x.ts:12:7`).
    for (const d of error.diagnostics) {
      const match = /^(src\/[^:]+):(\d+):(\d+)$/.exec(d.path);
      if (match) return { file: match[1]!, line: Number(match[2]), column: Number(match[3]) };
    }
    return undefined;
  }
  if (error instanceof AppLoadError) {
    const problem = error.problems.find((p) => p.file);
    if (!problem?.file) return undefined;
    const match = /\(line (\d+)(?:, column (\d+))?\)/.exec(problem.message);
    return { file: problem.file, line: problem.line ?? Number(match?.[1] ?? 1), column: problem.column ?? Number(match?.[2] ?? 1) };
  }
  if (error instanceof FwFailure) {
    const located = (error.diagnostics as Located[]).find((d) => d.file && d.line);
    if (located) return { file: located.file!, line: located.line!, column: located.column ?? 1 };
  }
  return undefined;
}
