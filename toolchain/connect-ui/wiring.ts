import { parseSync } from 'oxc-parser';
import { type AstNode, jsxName, memberPath, walk } from '../../plugin/analyse/frontend/ast.ts';
import { type Edit, freshName } from './edits.ts';
import { importSpecifier } from '../../plugin/analyse/frontend/layout.ts';
import type { BridgeExport } from './script-plan.ts';

/** The names a module exports (values and types alike), from its syntax tree. */
export function exportedNames(file: string, code: string): Set<string> {
  const parsed = parseSync(file, code);
  return new Set(parsed.module.staticExports.flatMap((e) => e.entries.map((entry) => entry.exportName.name ?? 'default')));
}

/**
 * The bridge's text with a re-export line for every name a rewritten import needs and the bridge does
 * not export yet (`export { api } from '../../../src/fw/_generated/api.ts';`, `export type` for types).
 */
export function bridgeWithExports(bridge: string, code: string, needed: readonly BridgeExport[]): { code: string; added: string[] } {
  const have = exportedNames(bridge, code);
  const groups = new Map<string, string[]>();
  const added: string[] = [];
  for (const { name, typeOnly, from } of needed) {
    if (have.has(name)) continue;
    have.add(name);
    added.push(name);
    const key = `${typeOnly ? 'type' : 'value'}\0${from}`;
    groups.set(key, [...(groups.get(key) ?? []), name]);
  }
  if (groups.size === 0) return { code, added };
  const lines = [...groups].map(([key, names]) => {
    const [kind, from] = key.split('\0') as [string, string];
    return `export ${kind === 'type' ? 'type ' : ''}{ ${names.join(', ')} } from '${importSpecifier(bridge, from, /\.[cm]?[jt]sx?$/.test(from))}';`;
  });
  return { code: `${code.replace(/\s*$/, '\n')}${lines.join('\n')}\n`, added };
}

const devAuthLiteral = "{ userId: 'dev-user', tenantId: '00000000-0000-4000-8000-000000000001', role: 'member' }";

/**
 * Mounts `<FwProvider>` in a React entry file: wraps what `createRoot(…).render(…)`,
 * `hydrateRoot(el, …)` or `ReactDOM.render(…, el)` renders (inside a `<StrictMode>` that wraps it
 * all), declares the dev identity before that statement and imports the provider from the bridge.
 * Refused (undefined) when no such render call is found.
 */
export function planViteProvider(file: string, code: string, bridge: string, extension: boolean): Edit[] | undefined {
  const parsed = parseSync(file, code);
  if (parsed.errors.length > 0) return undefined;
  const program = parsed.program as unknown as AstNode;
  let target: { element: AstNode; statement: AstNode } | undefined;
  walk(program, (node, ancestors) => {
    if (target !== undefined || node.type !== 'CallExpression') return;
    const callee = memberPath(node.callee) ?? (node.callee.type === 'MemberExpression' && node.callee.property.name === 'render' ? ['…', 'render'] : undefined);
    const last = callee?.at(-1);
    const element = last === 'render' ? node.arguments[0] : last === 'hydrateRoot' ? node.arguments[1] : undefined;
    if (element?.type !== 'JSXElement' && element?.type !== 'JSXFragment') return;
    // ancestors[0] is the program: [1] is the top-level statement the call is in.
    const statement = ancestors[1] ?? node;
    target = { element, statement };
  });
  if (target === undefined) return undefined;

  const devAuth = freshName(code, 'devAuth');
  const open = `<FwProvider apiUrl={import.meta.env.VITE_FW_URL ?? ''} devAuth={${devAuth}}>`;
  const { element, statement } = target;
  const strict = element.type === 'JSXElement' && /(?:^|\.)StrictMode$/.test(jsxName(element.openingElement.name)) && element.closingElement;
  const [start, end] = strict ? [element.openingElement.end, element.closingElement.start] : [element.start, element.end];
  const lastImport = (program.body as AstNode[]).filter((n) => n.type === 'ImportDeclaration').at(-1);
  const importLine = `import { FwProvider } from '${importSpecifier(file, bridge, extension)}';`;
  return [
    lastImport ? { start: lastImport.end, end: lastImport.end, text: `\n${importLine}` } : { start: 0, end: 0, text: `${importLine}\n` },
    {
      start: statement.start,
      end: statement.start,
      text: `// In development the runtime identifies callers by dev headers; production uses real sign-in.\nconst ${devAuth} = import.meta.env.DEV\n  ? ${devAuthLiteral}\n  : undefined;\n\n`,
    },
    { start, end: start, text: open },
    { start: end, end, text: '</FwProvider>' },
  ];
}
