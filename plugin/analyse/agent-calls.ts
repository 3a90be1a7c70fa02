import { parseSync } from 'oxc-parser';
import { type CheckDiagnostic, checkDiagnostic } from './check-diagnostic.ts';
import { type AstNode, importedName, memberPath, walk } from './frontend/ast.ts';
import { positionFinder } from './table-access.ts';

/** `ctx.agent.run(…)`, `ctx.ai.runAgent(…)`, …: the member-call endings that run an agent or a model. */
const agentMembers: ReadonlyArray<readonly [string, string]> = [
  ['agent', 'run'],
  ['ai', 'runAgent'],
  ['ai', 'generateText'],
  ['ai', 'generateStructured'],
];

/** Exports of the AI SDK (`ai`) that run a model or an agent loop. */
export const aiRunExports: ReadonlySet<string> = new Set(['generateText', 'streamText', 'generateObject', 'streamObject', 'ToolLoopAgent', 'Experimental_Agent']);

/**
 * Names the agent or model run a call (or `new`) makes, or undefined. `imports` maps a local name to
 * the module and export it was imported from.
 *
 * @example
 *   agentRunCall(['ctx', 'ai', 'runAgent'], new Map()) // 'ctx.ai.runAgent'
 */
export function agentRunCall(callee: string[] | undefined, imports: ReadonlyMap<string, { source: string; imported: string }>): string | undefined {
  if (callee === undefined) return undefined;
  if (callee.length >= 2 && agentMembers.some(([a, b]) => callee.at(-2) === a && callee.at(-1) === b)) return callee.join('.');
  const imported = imports.get(callee[0]!);
  if (callee.length === 1 && imported?.source === 'ai' && aiRunExports.has(imported.imported)) return callee[0];
  return undefined;
}

const disallowedKinds = new Set(['command', 'query', 'liveQuery']);

/**
 * Spec Errors 4: agents run only in actions, workflows, endpoints and server-only code. The agent and
 * model runs in one command, query or liveQuery file (none for other kinds), from its parsed source.
 */
export function entryAgentRuns(entry: { kind: string; name: string; file: string }, source: string, parsed: ReturnType<typeof parseSync>): CheckDiagnostic[] {
  if (!disallowedKinds.has(entry.kind)) return [];
  const found: CheckDiagnostic[] = [];
  const position = positionFinder(source);
  const imports = new Map<string, { source: string; imported: string }>();
  for (const statement of parsed.module.staticImports) {
    for (const e of statement.entries) imports.set(e.localName.value, { source: statement.moduleRequest.value, imported: importedName(e.importName) });
  }
  walk(parsed.program as unknown as AstNode, (node) => {
    if (node.type !== 'CallExpression' && node.type !== 'NewExpression') return;
    const call = agentRunCall(memberPath(node.callee), imports);
    if (call === undefined) return;
    const at = position(node.start);
    found.push(checkDiagnostic({
      code: 'agent_in_disallowed_context',
      severity: 'error',
      message: `${entry.kind} ${entry.name} runs an agent or model (${call}); ${entry.kind === 'command' ? 'commands run in a database transaction' : 'queries must stay fast, read-only and repeatable'}.`,
      file: entry.file,
      ...at,
      hint: 'Move the AI call into an action or workflow (they run after commit) or an endpoint, and call that instead.',
      suggestedCommand: 'fw ai agents --json',
    }));
  });
  return found;
}
