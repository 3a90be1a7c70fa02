import { readFileSync } from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { fwPackageRoot } from '../../plugin/package-root.ts';
import { resolveTypescript, startTypecheckWorker, type TypecheckMessage, typecheckProjects, type TypeDiagnostic } from '../../plugin/dev-server/typecheck.ts';

/** What one check found, or why it did not run. */
export type TypecheckOnceResult =
  | {
      ran: true;
      /** The tsconfig files checked, relative to the root. */
      projects: string[];
      /** The TypeScript that checked them: the app's own, or fw's when asked to lend it. */
      typescript: { version: string; from: 'app' | 'fw' };
      diagnostics: TypeDiagnostic[];
    }
  | { ran: false; kind: 'no_tsconfig' | 'no_typescript'; reason: string };

export interface TypecheckOnceOptions {
  root: string;
  /** Use fw's own TypeScript when the app has none (fw verify does; fw check says it is missing). */
  fallbackToFw?: boolean;
}

/**
 * One typecheck of the app, as `tsc -p <project> --noEmit` for each project `fw dev` watches: the same
 * worker (typecheck-worker.ts) in its one-shot mode, so `fw check`, `fw verify` and `fw dev` report the
 * same errors the same way. It runs in a thread, so a caller can load the app meanwhile.
 *
 * @example
 *   const result = await typecheckOnce({ root: '.' });
 *   if (result.ran) result.diagnostics // [{ file: 'src/a.ts', line: 2, column: 7, code: 2322, message: '…' }]
 */
export async function typecheckOnce(options: TypecheckOnceOptions): Promise<TypecheckOnceResult> {
  const root = path.resolve(options.root);
  const projects = typecheckProjects(root);
  if (projects.length === 0) return { ran: false, kind: 'no_tsconfig', reason: 'The app has no tsconfig.json.' };
  const own = resolveTypescript(root);
  const lent = own || !options.fallbackToFw ? undefined : resolveTypescript(fwPackageRoot());
  const typescript = own ?? lent;
  if (!typescript) {
    return { ran: false, kind: 'no_typescript', reason: 'The app has no typescript installed, so its types were not checked (npm install --save-dev typescript).' };
  }
  const worker = startTypecheckWorker({ root, typescript, projects: projects.map((p) => path.join(root, p)), watch: false });
  try {
    // The worker posts one result; an exception in it rejects (`once` rejects on 'error').
    const [message] = (await Promise.race([once(worker, 'message'), once(worker, 'exit').then(([code]) => Promise.reject(new Error(`the typecheck worker exited with ${String(code)} before reporting`)))])) as [TypecheckMessage];
    return { ran: true, projects, typescript: { version: versionOf(typescript), from: own ? 'app' : 'fw' }, diagnostics: message.diagnostics };
  } finally {
    await worker.terminate();
  }
}

/** The version of the `typescript` package whose module is `file` (…/typescript/lib/typescript.js). */
function versionOf(file: string): string {
  for (let dir = path.dirname(file); path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    try {
      const json = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (json.name === 'typescript') return json.version ?? '';
    } catch {}
  }
  return '';
}
