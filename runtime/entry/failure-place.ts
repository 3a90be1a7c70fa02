import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AppDefinition } from '../core/app-definition.ts';
import { type Diagnostic, FwError } from '../core/errors.ts';
import { statementSite } from '../db/statement-site.ts';

/** The diagnostic code of "this entry failed here". */
export const ENTRY_FAILED = 'entry_failed';

/**
 * A server-side failure (5xx) of an entry, told with the entry it happened in and the place in the
 * app's source: for a failed statement of ctx.db (an SQL error, whose own stack is the driver's alone),
 * the line that built it (db/statement-site.ts); else the first frame of its stack inside the app's
 * `src/` (the module runner maps stacks to the TypeScript as written); else the entry's file at its
 * `handler`. The message leads with the entry (`command createNote: column
 * "stauts" does not exist`), so the log line says it; the place is a diagnostic (`path`
 * `src/commands/createNote.ts:12:7`), which dev answers show and production answers never do
 * (core/public-error.ts). 4xx errors describe the caller's request and are returned as they are, and
 * so are errors with diagnostics of their own.
 */
export function placeFailure(error: FwError, entry: { kind: string }, name: string, app: AppDefinition): FwError {
  // An error with diagnostics says where it is already (fw's own refusals: `liveQuery "x" reads a view …`).
  if (error.status < 500 || error.diagnostics.length > 0) return error;
  const label = `${entry.kind} ${name}`;
  const place = app.sources ? (stackPlace(error, app.sources.root) ?? handlerPlace(app.sources.root, app.sources.files.get(name))) : undefined;
  const diagnostic: Diagnostic = {
    path: place ? `${place.file}${place.line ? `:${place.line}:${place.column}` : ''}` : `entries.${name}`,
    code: ENTRY_FAILED,
    message: `${label} failed${place?.frame ? '' : place ? ' (its handler; the stack does not reach it)' : ''}: ${error.message}`,
  };
  return new FwError(error.code, `${label}: ${error.message}`, {
    cause: error.cause ?? error,
    diagnostics: [diagnostic, ...error.diagnostics],
    headers: error.headers,
    ...(error.redacted ? { redacted: error.redacted } : {}),
  });
}

interface Place {
  file: string;
  line?: number;
  column?: number;
  /** Found in the stack (else: the handler's line in the entry's file). */
  frame?: boolean;
}

const FRAME = /\(?((?:file:\/\/)?(?:\/|[A-Za-z]:[\\/])[^():\n]+?\.[cm]?[jt]sx?):(\d+):(\d+)\)?$/;

/** The first stack frame (of a failed statement's site, else of the error, then its causes) in the app's own sources. */
function stackPlace(error: FwError, root: string): Place | undefined {
  const src = path.join(root, 'src') + path.sep;
  const generated = path.join(root, 'src', 'fw', '_generated') + path.sep;
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const stacks = [statementSite(current)?.stack, current.stack].filter((stack) => stack !== undefined);
    for (const line of stacks.join('\n').split('\n')) {
      const match = FRAME.exec(line.trim());
      if (!match) continue;
      const file = match[1]!.startsWith('file://') ? fileURLToPath(match[1]!) : match[1]!;
      if (!file.startsWith(src) || file.startsWith(generated)) continue;
      return { file: path.relative(root, file).split(path.sep).join('/'), line: Number(match[2]), column: Number(match[3]), frame: true };
    }
  }
  return undefined;
}

/** The `handler` of the entry in its file (1-based line and column), or the file alone. */
function handlerPlace(root: string, file: string | undefined): Place | undefined {
  if (!file) return undefined;
  let text: string;
  try {
    text = readFileSync(path.join(root, file), 'utf8');
  } catch {
    return { file };
  }
  const at = /\bhandler\s*[:(]/.exec(text) ?? /\bhandler\b/.exec(text);
  if (!at) return { file };
  const before = text.slice(0, at.index).split('\n');
  return { file, line: before.length, column: before.at(-1)!.length + 1 };
}
