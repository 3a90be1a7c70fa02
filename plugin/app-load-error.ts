/**
 * Why an app does not load: its problems, each with its place when fw can tell. Kept apart from the
 * loader (load-app.ts, which pulls in Vite and the app's definitions), so what only reports a failure —
 * the CLI's output, the overlay — loads none of that.
 */

/** One reason an app does not load, with its place when fw can tell (file relative to the app root, 1-based line/column). */
export interface AppLoadProblem {
  file?: string;
  line?: number;
  column?: number;
  code?: string;
  hint?: string;
  message: string;
}

export class AppLoadError extends Error {
  readonly problems: AppLoadProblem[];
  constructor(given: AppLoadProblem[]) {
    const problems = given.map(withMessagePlace);
    super(problems.map((p) => (p.file ? `${p.file}${p.line ? `:${p.line}:${p.column ?? 1}` : ''}: ${p.message}` : p.message)).join('\n'));
    this.name = 'AppLoadError';
    this.problems = problems;
  }
}

/** A parser's "(line N, column M)" in the message becomes the problem's place. */
function withMessagePlace(problem: AppLoadProblem): AppLoadProblem {
  if (problem.line !== undefined || !problem.file) return problem;
  const match = /\(line (\d+)(?:, column (\d+))?\)/.exec(problem.message);
  return match ? { ...problem, line: Number(match[1]), column: Number(match[2] ?? 1) } : problem;
}
