import type { OverlayError } from '../overlay-error.ts';

/** Where fw's problem comes from: a backend reload that failed, or fw's analysis of web/. */
export type ProblemSource = 'backend' | 'frontend';

/** Each app root's problems of the moment (the Vite plugin and fw dev's typecheck share the process). */
const problems = new Map<string, Map<ProblemSource, OverlayError>>();

/**
 * fw's own problem of the moment in a dev server's overlay: a reload that failed (the schema held
 * back for data loss, a file that does not load) or a finding of the web/ analysis (a hook naming no
 * entry: "Did you mean 'completeTask'?"). The typecheck's overlay shows it above its type errors
 * (typecheck-overlay.ts) instead of replacing it: fw's problem says the fix in fw's words, and the
 * type errors (TS2345 for the same misspelt name) often follow from it. `undefined` clears it.
 */
export function setFwProblem(root: string, source: ProblemSource, problem: OverlayError | undefined): void {
  const current = problems.get(root) ?? new Map<ProblemSource, OverlayError>();
  if (problem) current.set(source, problem);
  else current.delete(source);
  if (current.size > 0) problems.set(root, current);
  else problems.delete(root);
}

/** The problem to show first: the backend's (nothing of the new code serves until it is fixed), else the web analysis'. */
export function fwProblem(root: string): OverlayError | undefined {
  const current = problems.get(root);
  return current?.get('backend') ?? current?.get('frontend');
}
