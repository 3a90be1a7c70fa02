import { parseSync } from 'oxc-parser';
import type { EntryKind } from '../../runtime/core/entry-types.ts';
import { type AstNode, functionName, isComponentName, isFunction, keyName, memberPath, staticText, unwrap, walk } from '../../plugin/analyse/frontend/ast.ts';
import { importSpecifier, resolveImport } from '../../plugin/analyse/frontend/layout.ts';
import { type Edit, freshName, indentAt } from './edits.ts';

/** One script to repair: a whole `.ts`/`.tsx` file or one script block of a `.vue` file. */
export interface ScriptUnit {
  /** App-relative path of the file the script is in. */
  file: string;
  /** A file name whose extension tells oxc the language. */
  parseAs: string;
  code: string;
  /** A `<script setup>` block: its top level is the component's setup. */
  vueSetup: boolean;
}

export interface ScriptContext {
  /** App-relative path of the bridge file (it exists, or is being created). */
  bridge: string;
  /** Every web/ file, app-relative (to resolve imports). */
  files: ReadonlySet<string>;
  /** Entry name → kind. */
  entries: ReadonlyMap<string, EntryKind>;
  /** `useCommand` (React) or `useFwCommand` (Vue). */
  commandHook: 'useCommand' | 'useFwCommand';
  /** Whether new bridge imports carry the `.ts` extension when the file gives no example. */
  extensionByDefault: boolean;
}

/** A name the bridge must export for a rewritten import to resolve. */
export interface BridgeExport {
  name: string;
  typeOnly: boolean;
  /** The app-relative module it comes from (`src/fw/_generated/api.ts`). */
  from: string;
}

/** What connect-ui did or could not do at one place, by offset into the unit's code. */
export interface Finding {
  code: 'deep_generated_import' | 'raw_runtime_fetch';
  offset: number;
  /** For a fix: what changed. For a refusal: why it is not mechanical. */
  text: string;
}

export interface ScriptPlan {
  edits: Edit[];
  fixed: Finding[];
  refused: Finding[];
  bridgeExports: BridgeExport[];
}

const fetchCallees = new Set(['fetch', 'window.fetch', 'globalThis.fetch', 'self.fetch', '$fetch']);
const runtimeRoute = /(?:^|…|\/)(commands|queries|live)\/([A-Za-z_$][\w$]*)$/;
const generatedSource = /(?:^|\/)_generated\//;

/**
 * Plans the repairs of one script, all against its original text: imports from `_generated/` move to
 * the bridge, and a raw `fetch` of `/commands/<name>` whose response is not used becomes
 * `<name>Command.mutateAsync(args)` of a `useCommand`/`useFwCommand` declared at the top of the
 * component (a call whose response is read, a query, or code outside a component is refused, with the
 * reason: rewriting those changes what the code does).
 *
 * @example
 *   planScript({ file: 'web/src/App.tsx', parseAs: 'App.tsx', code, vueSetup: false }, context).fixed
 *   // [{ code: 'raw_runtime_fetch', offset: 210, text: "fetch('/commands/createNote') → createNoteCommand.mutateAsync(…)" }]
 */
export function planScript(unit: ScriptUnit, context: ScriptContext): ScriptPlan {
  const plan: ScriptPlan = { edits: [], fixed: [], refused: [], bridgeExports: [] };
  const parsed = parseSync(unit.parseAs, unit.code);
  if (parsed.errors.length > 0) return plan; // parse_error is reported by the checks; nothing is edited.
  const program = parsed.program as unknown as AstNode;
  const bridgeImports: AstNode[] = [];
  const wantsExtension = prefersExtension(program, context.extensionByDefault);
  const bridgeSpecifier = importSpecifier(unit.file, context.bridge, wantsExtension);

  for (const node of program.body as AstNode[]) {
    if (node.type !== 'ImportDeclaration') continue;
    const source: string = node.source.value;
    if (resolveImport(unit.file, source, context.files) === context.bridge) bridgeImports.push(node);
    if (!generatedSource.test(source)) continue;
    const specifiers = node.specifiers as AstNode[];
    const unmappable = specifiers.find((s) => s.type !== 'ImportSpecifier');
    if (unmappable) {
      plan.refused.push({ code: 'deep_generated_import', offset: node.source.start, text: `${unmappable.type === 'ImportNamespaceSpecifier' ? 'A namespace' : 'A default'} import from _generated/ has no counterpart among the bridge's named exports; import the names you use from the bridge.` });
      continue;
    }
    const extension = /\.[cm]?[jt]sx?$/.test(source) || wantsExtension;
    const from = resolveImport(unit.file, source, context.files) ?? source;
    for (const s of specifiers) {
      const name = s.imported.type === 'Identifier' ? s.imported.name : s.imported.value;
      plan.bridgeExports.push({ name, typeOnly: node.importKind === 'type' || s.importKind === 'type', from });
    }
    const specifier = importSpecifier(unit.file, context.bridge, extension);
    plan.edits.push({ start: node.source.start + 1, end: node.source.end - 1, text: specifier });
    plan.fixed.push({ code: 'deep_generated_import', offset: node.source.start, text: `import from '${source}' → '${specifier}'` });
    bridgeImports.push(node);
  }

  const hooks = new Map<AstNode, Map<string, string>>(); // component body → command → variable
  const needed = new Set<string>();
  walk(program, (node, ancestors) => {
    if (node.type !== 'CallExpression') return;
    const callee = memberPath(node.callee)?.join('.');
    if (callee === undefined || !fetchCallees.has(callee)) return;
    const url = staticText(node.arguments[0]);
    const route = url === undefined ? undefined : runtimeRoute.exec(url.replace(/[?#].*$/, ''));
    if (!route) return; // external routes and dynamic paths: reported by the checks as they are.
    const section = route[1]!;
    const name = route[2]!;
    const refuse = (text: string) => plan.refused.push({ code: 'raw_runtime_fetch', offset: node.start, text });
    if (section !== 'commands') {
      const hook = section === 'live' ? 'useLiveQuery' : 'useQuery';
      return refuse(`${name} is read through a ${section === 'live' ? 'live stream' : 'query'}: the component should render ${hook}('${name}', args).data instead of keeping its own copy, a change of structure that is not mechanical.`);
    }
    if (context.entries.get(name) !== 'command') return refuse(`${name} is not a command of this app; there is nothing to rewrite it to.`);
    if (!resultUnused(node, ancestors)) return refuse('Its response is read; rewrite it by hand to the command hook, whose mutateAsync resolves to the result (not a Response) and throws FwError on failure.');
    const args = argsText(unit.code, node, callee === '$fetch');
    if (args === undefined) return refuse('Its body is not written as JSON.stringify({ args: … }), so the args cannot be taken over mechanically.');
    const body = componentBody(unit, ancestors);
    if (body === undefined) return refuse(`It is not inside an event handler of a component, where ${context.commandHook} can be declared.`);
    let variables = hooks.get(body.node);
    if (!variables) hooks.set(body.node, (variables = new Map()));
    let variable = variables.get(name) ?? declaredHook(body.node, context.commandHook, name);
    if (variable !== undefined) variables.set(name, variable);
    else {
      variable = freshName(unit.code, `${name}Command`);
      variables.set(name, variable);
      plan.edits.push({ start: body.insertAt, end: body.insertAt, text: `${body.before}const ${variable} = ${context.commandHook}('${name}');${body.after}` });
    }
    needed.add(context.commandHook);
    const replacement = `${variable}.mutateAsync(${args})`;
    plan.edits.push({ start: node.start, end: node.end, text: replacement });
    plan.fixed.push({ code: 'raw_runtime_fetch', offset: node.start, text: `${callee}('${url}') → ${replacement}` });
  });

  // Imports first: at a shared offset (Vue's last import) they land before the hook declarations.
  if (needed.size > 0) plan.edits.unshift(...importEdits(program, unit.code, bridgeImports, [...needed], bridgeSpecifier));
  return plan;
}

/** `import { a } from 'x'` edits that make `names` available from the bridge: into an existing value import, or a new line. */
function importEdits(program: AstNode, code: string, bridgeImports: readonly AstNode[], names: readonly string[], specifier: string): Edit[] {
  const existing = bridgeImports.find((i) => i.importKind !== 'type' && (i.specifiers as AstNode[]).some((s) => s.type === 'ImportSpecifier'));
  const imported = new Set(bridgeImports.flatMap((i) => (i.specifiers as AstNode[]).filter((s) => s.importKind !== 'type').map((s) => s.local.name as string)));
  const missing = names.filter((n) => !imported.has(n));
  if (missing.length === 0) return [];
  if (existing) {
    const last = (existing.specifiers as AstNode[]).filter((s) => s.type === 'ImportSpecifier').at(-1)!;
    return [{ start: last.end, end: last.end, text: missing.map((n) => `, ${n}`).join('') }];
  }
  const line = `import { ${missing.join(', ')} } from '${specifier}';`;
  const lastImport = (program.body as AstNode[]).filter((n) => n.type === 'ImportDeclaration').at(-1);
  if (lastImport) return [{ start: lastImport.end, end: lastImport.end, text: `\n${indentAt(code, lastImport.start)}${line}` }];
  const first = code.match(/^\s*/)![0].length;
  return [{ start: first, end: first, text: `${line}\n` }];
}

/** Whether the value of a call is thrown away: `fetch(…);`, `await fetch(…);`, `void fetch(…)`. */
function resultUnused(node: AstNode, ancestors: readonly AstNode[]): boolean {
  let child = node;
  for (let i = ancestors.length - 1; i >= 0; i--) {
    const parent = ancestors[i]!;
    if (parent.type === 'AwaitExpression' || parent.type === 'ParenthesizedExpression') {
      child = parent;
      continue;
    }
    if (parent.type === 'UnaryExpression' && parent.operator === 'void') return true;
    return parent.type === 'ExpressionStatement' && parent.expression === child;
  }
  return false;
}

/** The source text of the call's args: `JSON.stringify({ args: X })` (or `$fetch`'s `body: { args: X }`) → `X`; no body → `{}`. */
function argsText(code: string, call: AstNode, bodyIsObject: boolean): string | undefined {
  const init = call.arguments[1] ? unwrap(call.arguments[1]) : undefined;
  if (init === undefined) return '{}';
  if (init.type !== 'ObjectExpression') return undefined;
  const body = (init.properties as AstNode[]).find((p) => p.type === 'Property' && keyName(p) === 'body');
  if (body === undefined) return (init.properties as AstNode[]).every((p) => p.type === 'Property') ? '{}' : undefined;
  let envelope = unwrap(body.value);
  if (!bodyIsObject) {
    if (envelope.type !== 'CallExpression' || memberPath(envelope.callee)?.join('.') !== 'JSON.stringify' || envelope.arguments.length !== 1) return undefined;
    envelope = unwrap(envelope.arguments[0]);
  }
  if (envelope.type !== 'ObjectExpression') return undefined;
  const properties = envelope.properties as AstNode[];
  const args = properties.find((p) => p.type === 'Property' && keyName(p) === 'args');
  if (args === undefined || properties.length !== 1) return undefined;
  return code.slice(args.value.start, args.value.end);
}

/**
 * Where a command hook can be declared for a call: the top of the component function around it (React)
 * or the top level of `<script setup>` (Vue). The call must sit in a function inside it (a handler), so
 * it never runs during render. Undefined when there is no such place.
 */
function componentBody(unit: ScriptUnit, ancestors: readonly AstNode[]): { node: AstNode; insertAt: number; before: string; after: string } | undefined {
  const functions = ancestors.map((node, index) => ({ node, index })).filter(({ node }) => isFunction(node));
  if (unit.vueSetup) {
    if (functions.length === 0) return undefined;
    const program = ancestors[0]!;
    const lastImport = (program.body as AstNode[]).filter((n) => n.type === 'ImportDeclaration').at(-1);
    const at = lastImport?.end ?? 0;
    return { node: program, insertAt: at, before: lastImport ? '\n' : '', after: lastImport ? '' : '\n' };
  }
  for (let k = functions.length - 1; k >= 0; k--) {
    const { node: fn, index } = functions[k]!;
    const name = functionName(fn, ancestors[index - 1]) ?? (ancestors[index - 1]?.type === 'CallExpression' ? declaratorName(ancestors[index - 2]) : undefined);
    if (name === undefined || !isComponentName(name)) continue;
    if (k === functions.length - 1 || fn.body.type !== 'BlockStatement') return undefined;
    const first = (fn.body.body as AstNode[])[0];
    const indent = first ? indentAt(unit.code, first.start) : `${indentAt(unit.code, fn.start)}  `;
    return { node: fn.body, insertAt: fn.body.start + 1, before: `\n${indent}`, after: '' };
  }
  return undefined;
}

/**
 * The variable of a `const x = useCommand('name')` the component (or Vue `<script setup>`) already
 * declares at its top level, so a repaired fetch reuses it rather than declaring a second hook.
 */
function declaredHook(body: AstNode, hook: string, name: string): string | undefined {
  for (const statement of body.body as AstNode[]) {
    if (statement.type !== 'VariableDeclaration') continue;
    for (const declarator of statement.declarations as AstNode[]) {
      const init = declarator.init && unwrap(declarator.init);
      if (declarator.id.type !== 'Identifier' || init?.type !== 'CallExpression') continue;
      if (init.callee.type !== 'Identifier' || init.callee.name !== hook) continue;
      const first = init.arguments[0];
      if (first?.type === 'Literal' && first.value === name) return declarator.id.name;
      // Vue: useFwCommand(api.commands.<name>)
      if (first && memberPath(first)?.join('.').endsWith(`commands.${name}`)) return declarator.id.name;
    }
  }
  return undefined;
}

function declaratorName(node: AstNode | undefined): string | undefined {
  return node?.type === 'VariableDeclarator' && node.id.type === 'Identifier' ? node.id.name : undefined;
}

/** Whether the script's own relative imports carry extensions (`./lib/fw.ts`); the default when it has none. */
function prefersExtension(program: AstNode, fallback: boolean): boolean {
  const relative = (program.body as AstNode[]).filter((n) => n.type === 'ImportDeclaration' && /^\.\.?\//.test(n.source.value)).map((n) => n.source.value as string);
  if (relative.length === 0) return fallback;
  return relative.some((s) => /\.[cm]?[jt]sx?$/.test(s));
}
