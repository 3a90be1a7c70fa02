import { type CheckDiagnostic, checkDiagnostic } from '../../plugin/analyse/check-diagnostic.ts';
import { typecheckOnce, type TypecheckOnceResult } from '../dev/typecheck-once.ts';

/**
 * `fw check`'s `types` check: the app's own TypeScript over the projects `fw dev` watches (tsconfig.json,
 * and web/tsconfig.json for a Vite web/; a Nuxt web/'s .vue files need `nuxt typecheck web`), each error
 * a `type_error`. An app without typescript gets one `typecheck_skipped` info, not a failure.
 */
export async function typeCheckDiagnostics(root: string): Promise<CheckDiagnostic[]> {
  try {
    return toCheckDiagnostics(await typecheckOnce({ root }));
  } catch (error) {
    // The app's TypeScript could not run at all (a broken install): said as a finding, the other checks still reported.
    const message = `fw could not typecheck the app: ${error instanceof Error ? error.message : String(error)}`;
    return toCheckDiagnostics({ ran: true, projects: [], typescript: { version: '', from: 'app' }, diagnostics: [{ file: 'tsconfig.json', code: 0, message }] });
  }
}

/** A typecheck's result as check diagnostics (pure). */
export function toCheckDiagnostics(result: TypecheckOnceResult): CheckDiagnostic[] {
  if (!result.ran) {
    return [
      checkDiagnostic({
        code: 'typecheck_skipped',
        severity: 'info',
        file: result.kind === 'no_typescript' ? 'package.json' : '.',
        line: 1,
        column: 1,
        message: result.reason,
        hint: result.kind === 'no_typescript' ? 'Install TypeScript in the app to have fw check, fw dev and fw verify check its types.' : 'Add a tsconfig.json to have the app typechecked.',
        suggestedCommand: result.kind === 'no_typescript' ? 'npm install --save-dev typescript' : 'fw check',
      }),
    ];
  }
  return result.diagnostics.map((d) =>
    checkDiagnostic({
      code: 'type_error',
      severity: 'error',
      file: d.file,
      line: d.line ?? 1,
      column: d.column ?? 1,
      // TypeScript's own code leads, as tsc prints it, so it can be looked up.
      message: d.code ? `TS${d.code}: ${d.message}` : d.message,
      hint: 'A TypeScript error: fix it where it points (fw dev shows type errors as they appear, in the terminal and the overlay).',
      suggestedCommand: `npx tsc -p ${d.file.startsWith('web/') && result.projects.includes('web/tsconfig.json') ? 'web/tsconfig.json' : 'tsconfig.json'} --noEmit`,
    }),
  );
}
