import type { parseSync } from 'oxc-parser';
import { closestName } from '../../runtime/core/closest-name.ts';
import { type CheckDiagnostic, checkDiagnostic } from './check-diagnostic.ts';
import { type AstNode, memberPath, walk } from './frontend/ast.ts';
import { positionFinder } from './table-access.ts';

/**
 * `ctx.startWorkflow('name', …)` calls in a command whose name (a string literal) is no workflow of
 * the app: `unknown_workflow` errors, so the typo is found by `fw check` rather than by the first
 * caller. Names built at run time are not checked.
 */
export function entryWorkflowStarts(
  entry: { kind: string; name: string; file: string },
  source: string,
  parsed: ReturnType<typeof parseSync>,
  workflows: readonly string[],
): CheckDiagnostic[] {
  if (entry.kind !== 'command') return [];
  const found: CheckDiagnostic[] = [];
  const position = positionFinder(source);
  walk(parsed.program as unknown as AstNode, (node) => {
    if (node.type !== 'CallExpression' || memberPath(node.callee)?.at(-1) !== 'startWorkflow') return;
    const name: AstNode | undefined = node.arguments[0];
    if (name?.type !== 'Literal' || typeof name.value !== 'string' || workflows.includes(name.value)) return;
    const nearest = closestName(name.value, workflows, 3);
    found.push(checkDiagnostic({
      code: 'unknown_workflow',
      severity: 'error',
      message: `command ${entry.name} starts workflow "${name.value}", which the app does not have${workflows.length ? ` (workflows: ${workflows.join(', ')})` : ''}.`,
      file: entry.file,
      ...position(name.start),
      hint: nearest ? `Did you mean '${nearest}'?` : `Add src/workflows/${name.value}.ts (export default workflow({ … })), or fix the name.`,
      suggestedCommand: 'fw inspect client --json',
    }));
  });
  return found;
}
