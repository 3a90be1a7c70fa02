// fw's typecheck (typecheck.ts starts it): the app's own TypeScript with noEmit, off the caller's thread.
// For `fw dev`, in watch mode: each time every project has settled after a change, the whole set of type
// errors goes to the parent thread, which reports what changed. For `fw check` and `fw verify`, once:
// one program per project (no watchers), one result.
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type * as TS from 'typescript';
import type { TypecheckMessage, TypecheckWorkerData, TypeDiagnostic } from './typecheck.ts';

// Below the dev server on a busy machine: on Linux a priority set with pid 0 is this thread's alone
// (elsewhere it would be the whole process's, so it is left as it is).
if (process.platform === 'linux') {
  try {
    os.setPriority(0, 10);
  } catch {}
}

const { root, typescript, projects, watch } = workerData as TypecheckWorkerData;
const ts = createRequire(import.meta.url)(typescript) as typeof TS;

const post = (message: TypecheckMessage) => parentPort!.postMessage(message);

/** Each project's errors from its latest program (absent until its first program). */
const errors = new Map<string, TypeDiagnostic[]>();
/** TypeScript's scheduled program updates (its 250 ms debounce after a change), all projects. */
const pending = new Set<unknown>();
let changed = false;
let settling = false;

/**
 * Posts the errors once no project has an update scheduled: a change seen by two projects (the schema,
 * which web/tsconfig.json includes too) is one report, not a half-checked one followed by another.
 */
function settle(): void {
  if (settling) return;
  settling = true;
  setImmediate(() => {
    settling = false;
    if (!changed || pending.size > 0 || errors.size < projects.length) return;
    changed = false;
    post({ type: 'result', diagnostics: merged() });
  });
}

function merged(): TypeDiagnostic[] {
  const seen = new Map<string, TypeDiagnostic>();
  for (const list of errors.values()) for (const d of list) seen.set(`${d.file}:${d.line ?? 0}:${d.column ?? 0}:${d.code}:${d.message}`, d);
  return [...seen.values()].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0)));
}

function relative(file: string): string {
  return path.relative(root, file).split(path.sep).join('/');
}

function toDiagnostic(d: TS.Diagnostic, config: string): TypeDiagnostic {
  const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
  if (d.file && d.start !== undefined) {
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    return { file: relative(d.file.fileName), line: line + 1, column: character + 1, code: d.code, message };
  }
  return { file: relative(config), code: d.code, message };
}

/** What a watch builder and a plain program both answer (fw dev watches; fw check runs once). */
interface CheckedProgram {
  getConfigFileParsingDiagnostics(): readonly TS.Diagnostic[];
  getOptionsDiagnostics(): readonly TS.Diagnostic[];
  getGlobalDiagnostics(): readonly TS.Diagnostic[];
  getSyntacticDiagnostics(): readonly TS.Diagnostic[];
  getSemanticDiagnostics(): readonly TS.Diagnostic[];
}

/** What `tsc --noEmit` reports for a program: semantic errors only once the syntax is clean. */
function collect(builder: CheckedProgram, config: string): TypeDiagnostic[] {
  const found: TS.Diagnostic[] = [
    ...builder.getConfigFileParsingDiagnostics(),
    ...builder.getOptionsDiagnostics(),
    ...builder.getGlobalDiagnostics(),
    ...builder.getSyntacticDiagnostics(),
  ];
  if (!found.some((d) => d.category === ts.DiagnosticCategory.Error)) found.push(...builder.getSemanticDiagnostics());
  return found.filter((d) => d.category === ts.DiagnosticCategory.Error && !deletedRoot(d)).map((d) => toDiagnostic(d, config));
}

/**
 * TS6053 for a file an include pattern matched: in watch mode, a file just deleted, in the first program
 * after its deletion (TypeScript refreshes the pattern's matches after the file's own event). The next
 * program drops it; shown, it would flash a false error in the terminal and the overlay.
 */
function deletedRoot(d: TS.Diagnostic): boolean {
  return watch && d.code === 6053 && ts.flattenDiagnosticMessageText(d.messageText, '\n').includes('Matched by include pattern');
}

if (watch) watchProjects();
else post({ type: 'result', diagnostics: checkOnce() });

/** Every project in watch mode, reporting (through `settle`) after each change. */
function watchProjects(): void {
  for (const config of projects) {
    // A tsconfig that cannot be read is reported as an error of that file (TypeScript then watches it).
    const configErrors: TypeDiagnostic[] = [];
    const host = ts.createWatchCompilerHost(
      config,
      { noEmit: true },
      ts.sys,
      ts.createSemanticDiagnosticsBuilderProgram,
      (d) => {
        if (d.category !== ts.DiagnosticCategory.Error) return;
        configErrors.push(toDiagnostic(d, config));
        errors.set(config, [...configErrors]);
        changed = true;
        settle();
      },
      () => {},
      // One watcher per folder rather than per file (node_modules declarations included).
      { watchFile: ts.WatchFileKind.UseFsEventsOnParentDirectory },
    );
    host.afterProgramCreate = (builder) => {
      configErrors.length = 0;
      errors.set(config, collect(builder, config));
      changed = true;
      settle();
    };
    const setTimer = host.setTimeout?.bind(host) ?? setTimeout;
    const clearTimer = host.clearTimeout?.bind(host) ?? clearTimeout;
    host.setTimeout = (callback, ms, ...args) => {
      const handle: unknown = setTimer(() => {
        pending.delete(handle);
        try {
          callback(...args);
        } finally {
          settle();
        }
      }, ms);
      pending.add(handle);
      return handle;
    };
    host.clearTimeout = (handle) => {
      pending.delete(handle);
      clearTimer(handle);
      settle();
    };
    try {
      ts.createWatchProgram(host);
    } catch (error) {
      errors.set(config, [{ file: relative(config), code: 0, message: `fw could not typecheck this project: ${error instanceof Error ? error.message : String(error)}` }]);
      changed = true;
      settle();
    }
  }
}

/** Every project checked once, as `tsc -p <project> --noEmit` would, with no watcher left behind. */
function checkOnce(): TypeDiagnostic[] {
  for (const config of projects) {
    try {
      const configErrors: TS.Diagnostic[] = [];
      const host: TS.ParseConfigFileHost = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => configErrors.push(d) };
      const parsed = ts.getParsedCommandLineOfConfigFile(config, { noEmit: true }, host);
      if (!parsed) {
        errors.set(config, configErrors.filter((d) => d.category === ts.DiagnosticCategory.Error).map((d) => toDiagnostic(d, config)));
        continue;
      }
      const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, projectReferences: parsed.projectReferences, configFileParsingDiagnostics: parsed.errors });
      errors.set(config, collect(program, config));
    } catch (error) {
      errors.set(config, [{ file: relative(config), code: 0, message: `fw could not typecheck this project: ${error instanceof Error ? error.message : String(error)}` }]);
    }
  }
  return merged();
}
