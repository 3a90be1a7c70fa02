import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { styleText } from 'node:util';
import { Worker } from 'node:worker_threads';
import { isNuxtWeb } from '../nuxt-web.ts';

/** One type error, at a place in the app (`file` relative to its root; no line for a tsconfig's own). */
export interface TypeDiagnostic {
  file: string;
  line?: number;
  column?: number;
  /** TypeScript's code (2322 for TS2322); 0 when fw could not run the project at all. */
  code: number;
  message: string;
}

/** What typecheck-worker.ts is started with. */
export interface TypecheckWorkerData {
  root: string;
  /** The app's `typescript` module (resolved from its root). */
  typescript: string;
  /** Absolute paths of the tsconfig files to check. */
  projects: string[];
  /** Keep checking after each change (false: check once). */
  watch: boolean;
}

/** What the worker posts: every type error of every project, each time they have all settled. */
export type TypecheckMessage = { type: 'result'; diagnostics: TypeDiagnostic[] };

export interface TypecheckOptions {
  root: string;
  /** Check again after each change (default true; false checks once). */
  watch?: boolean;
  /** Where the lines go (fw dev: stderr). */
  log(line: string): void;
  /** ANSI colour in the lines (fw dev: `colourFor(process.stderr)`). */
  colour?: boolean;
  /** Every result as it comes, after the lines (fw dev: Vite's overlay, typecheck-overlay.ts). */
  onResult?(diagnostics: readonly TypeDiagnostic[]): void;
}

export interface Typecheck {
  /** The tsconfig files checked, relative to the root. */
  projects: string[];
  /** Stops the worker (fw dev's close, on SIGINT/SIGTERM). */
  close(): Promise<void>;
}

/**
 * `fw dev`'s background typecheck, what `vite-plugin-checker` gives a Vite app: the app's own TypeScript
 * checks the projects `npm run typecheck` checks (tsconfig.json, and web/tsconfig.json) in watch mode
 * with noEmit, in a worker thread, so a check never holds up a request or a reload. Each new type error
 * is printed once (`fw: src/x.ts:3:7 error TS2322 …`), then a summary whenever the set changes
 * (`fw: 3 type errors in 2 files`, `fw: types OK`); a check that finds the same set prints nothing.
 * An app without `typescript` installed gets one line saying typechecking is off and how to turn it on.
 * `onResult` gets every result too: fw dev shows the errors in Vite's overlay (typecheck-overlay.ts).
 *
 * @example
 *   const typecheck = startTypecheck({ root, log: (line) => process.stderr.write(`${line}\n`) });
 *   await typecheck?.close();
 */
export function startTypecheck(options: TypecheckOptions): Typecheck | undefined {
  const root = path.resolve(options.root);
  const projects = typecheckProjects(root);
  if (projects.length === 0) return undefined;
  const typescript = resolveTypescript(root);
  if (!typescript) {
    options.log('fw dev: typechecking is off: the app has no typescript installed (npm install --save-dev typescript turns it on; fw dev --no-typecheck says nothing).');
    return undefined;
  }
  const report = typeReporter({ log: options.log, colour: options.colour ?? false, projects });
  const worker = startTypecheckWorker({ root, typescript, projects: projects.map((p) => path.join(root, p)), watch: options.watch ?? true });
  // It never keeps fw dev alive, and it ends with it: a thread, not a process that could be left behind.
  worker.unref();
  let closed = false;
  worker.on('message', (message: TypecheckMessage) => {
    if (closed || message.type !== 'result') return;
    report(message.diagnostics);
    options.onResult?.(message.diagnostics);
  });
  worker.on('error', (error) => {
    if (!closed) options.log(`fw dev: typechecking stopped: ${error.message}`);
  });
  return {
    projects,
    async close() {
      closed = true;
      await worker.terminate();
    },
  };
}

/** The worker that runs the app's TypeScript (typecheck-worker.ts): fw dev's in watch mode, fw check's once (typecheck-once.ts). */
export function startTypecheckWorker(data: TypecheckWorkerData): Worker {
  // typecheck-worker.ts from the sources (tests, Node's type stripping), typecheck-worker.js from dist/.
  return new Worker(new URL(`./typecheck-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url), { workerData: data });
}

/**
 * The tsconfig files `npm run typecheck` checks in a template: the app's, and web/'s — not a Nuxt
 * web/'s, whose .vue files need vue-tsc (`nuxt typecheck web`).
 */
export function typecheckProjects(root: string): string[] {
  return ['tsconfig.json', ...(isNuxtWeb(root) ? [] : ['web/tsconfig.json'])].filter((file) => existsSync(path.join(root, file)));
}

/** The app's own `typescript` (a devDependency of every template), or undefined. */
export function resolveTypescript(root: string): string | undefined {
  try {
    return createRequire(path.join(root, 'package.json')).resolve('typescript');
  } catch {
    return undefined;
  }
}

/**
 * Reports successive sets of type errors: the errors not in the previous set, one line each, then a
 * summary; nothing when a set is the previous one again. The first summary names the projects checked.
 *
 * @example
 *   const report = typeReporter({ log: console.error, colour: false, projects: ['tsconfig.json'] });
 *   report([{ file: 'src/a.ts', line: 1, column: 7, code: 2322, message: "Type 'string' is not assignable to type 'number'." }]);
 *   // fw: src/a.ts:1:7 error TS2322 Type 'string' is not assignable to type 'number'.
 *   // fw: 1 type error in 1 file (tsconfig.json)
 */
export function typeReporter(options: { log(line: string): void; colour: boolean; projects: readonly string[] }): (diagnostics: readonly TypeDiagnostic[]) => void {
  const style = (format: Parameters<typeof styleText>[0], text: string) => (options.colour ? styleText(format, text, { validateStream: false }) : text);
  let previous: Set<string> | undefined;
  return (diagnostics) => {
    const current = new Set(diagnostics.map(keyOf));
    if (previous && previous.size === current.size && [...current].every((key) => previous!.has(key))) return;
    const first = previous === undefined;
    for (const d of diagnostics) if (!previous?.has(keyOf(d))) options.log(formatTypeDiagnostic(d, style));
    const files = new Set(diagnostics.map((d) => d.file)).size;
    const summary = diagnostics.length === 0 ? style('green', 'types OK') : style('red', `${plural(diagnostics.length, 'type error')} in ${plural(files, 'file')}`);
    options.log(`fw: ${summary}${first ? ` (${options.projects.join(', ')})` : ''}`);
    previous = current;
  };
}

/** `fw: src/x.ts:3:7 error TS2322 Type 'string' is not assignable to type 'number'.` (the style of fw's own findings). */
export function formatTypeDiagnostic(d: TypeDiagnostic, style: (format: 'red' | 'green' | 'cyan' | 'dim', text: string) => string = (_, text) => text): string {
  const place = d.line === undefined ? d.file : `${d.file}:${d.line}:${d.column ?? 1}`;
  const [head = '', ...rest] = d.message.split('\n');
  const code = d.code ? ` ${style('dim', `TS${d.code}`)}` : '';
  return [`fw: ${style('cyan', place)} ${style('red', 'error')}${code} ${head}`, ...rest.map((line) => `    ${line}`)].join('\n');
}

function keyOf(d: TypeDiagnostic): string {
  return `${d.file}:${d.line ?? 0}:${d.column ?? 0}:${d.code}:${d.message}`;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
