import type { parseSync } from 'oxc-parser';
import { closestName } from '../../runtime/core/closest-name.ts';
import { type CheckDiagnostic, checkDiagnostic } from './check-diagnostic.ts';
import { type AstNode, memberPath, walk } from './frontend/ast.ts';
import { positionFinder } from './table-access.ts';

/**
 * `ctx.scheduler.runAfter(delay, 'name', …)` and `runAt(when, 'name', …)` calls in a command whose
 * name (a string literal) is no command or action of the app: `unknown_scheduled_call` errors, so the
 * typo is found by `fw check` rather than when the command first runs. Names built at run time are not
 * checked.
 */
export function entryScheduledCalls(
  entry: { kind: string; name: string; file: string },
  source: string,
  parsed: ReturnType<typeof parseSync>,
  callables: readonly string[],
): CheckDiagnostic[] {
  if (entry.kind !== 'command') return [];
  const found: CheckDiagnostic[] = [];
  const position = positionFinder(source);
  walk(parsed.program as unknown as AstNode, (node) => {
    if (node.type !== 'CallExpression') return;
    const path = memberPath(node.callee);
    const method = path?.at(-1);
    if ((method !== 'runAfter' && method !== 'runAt') || path?.at(-2) !== 'scheduler') return;
    const name: AstNode | undefined = node.arguments[1];
    if (name?.type !== 'Literal' || typeof name.value !== 'string' || callables.includes(name.value)) return;
    const nearest = closestName(name.value, callables, 3);
    found.push(
      checkDiagnostic({
        code: 'unknown_scheduled_call',
        severity: 'error',
        message: `command ${entry.name} schedules "${name.value}" (ctx.scheduler.${method}), which is no command or action of the app.`,
        file: entry.file,
        ...position(name.start),
        hint: nearest ? `Did you mean '${nearest}'?` : `Add src/commands/${name.value}.ts or src/actions/${name.value}.ts, or fix the name.`,
        suggestedCommand: 'fw inspect --json',
      }),
    );
  });
  return found;
}
