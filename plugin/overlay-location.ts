import path from 'node:path';
import { FwFailure } from '../runtime/core/failure.ts';
import { AppLoadError } from './load-app.ts';

/** Where Vite's error overlay points (and links to the editor): an absolute file, 1-based line and column. */
export interface OverlayLocation {
  file: string;
  line: number;
  column: number;
}

/**
 * The place of a backend failure for the overlay, the same place its message names: an app load
 * problem's own `line`/`column` (its message reads `src/commands/x.ts:5:3: …`), or a diagnostic's
 * `file:line:column` path. Undefined when the failure names no file.
 *
 * @example
 *   overlayLocation('/app', new AppLoadError([{ file: 'src/commands/x.ts', line: 5, column: 3, message: '…' }]))
 *   // { file: '/app/src/commands/x.ts', line: 5, column: 3 }
 */
export function overlayLocation(root: string, error: unknown): OverlayLocation | undefined {
  if (error instanceof AppLoadError) {
    const problem = error.problems.find((p) => p.file);
    if (!problem?.file) return undefined;
    return { file: path.resolve(root, problem.file), line: problem.line ?? 1, column: problem.column ?? 1 };
  }
  if (error instanceof FwFailure && error.diagnostics[0]?.path) {
    const located = /^(.*?):(\d+):(\d+)$/.exec(error.diagnostics[0].path);
    const file = located ? located[1]! : error.diagnostics[0].path;
    return { file: path.resolve(root, file), line: located ? Number(located[2]) : 1, column: located ? Number(located[3]) : 1 };
  }
  return undefined;
}

/** The overlay's text: the message, then each problem's fix hint, as the terminal prints them. */
export function overlayMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const hints = error instanceof AppLoadError ? error.problems.flatMap((p) => (p.hint ? [`hint: ${p.hint}`] : [])) : error instanceof FwFailure ? error.suggestions.map((s) => `run: ${s}`) : [];
  return [message, ...new Set(hints)].join('\n');
}
