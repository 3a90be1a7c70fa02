import { parseSync } from 'oxc-parser';
import type { SourcePosition } from '../table-access.ts';
import { agentRunCall } from '../agent-calls.ts';
import { type AstNode, functionName, importedName, isComponentName, isFunction, jsxName, keyName, memberPath, staticText, stringValue, unwrap, walk } from './ast.ts';
import { commandHooks, type EntryTarget, type FileFacts, hookKinds, type HookName, type RouteFact, sectionKinds } from './facts.ts';

/** One file's facts while its script(s) are scanned, plus what links mutate calls to hooks afterwards. */
export interface Scan extends Omit<FileFacts, 'file' | 'hash'> {
  /** The component of a `.vue` file; null for script files. */
  fileComponent: string | null;
  /** Local name → where it was imported from. */
  importMap: Map<string, { source: string; imported: string }>;
  /** A variable holding a command hook's result → the hook's index. */
  hookBindings: Map<string, number>;
  /** A destructured `mutate`/`mutateAsync` local → its hook and method. */
  methodBindings: Map<string, { hook: number; method: 'mutate' | 'mutateAsync' }>;
  calls: MutateCandidate[];
  /** `onSubmit={addNote}`, `@submit="addNote"`: the event a named handler is wired to. */
  handlerRefs: Array<{ handler: string; event: string; element: string }>;
}

interface MutateCandidate {
  callee: string[];
  handler: string | null;
  event: string | null;
  element: string | null;
  component: string | null;
  at: SourcePosition;
}

export function emptyScan(fileComponent: string | null): Scan {
  return {
    fileComponent,
    errors: [], imports: [], defaultExport: null, components: [], renders: [], hooks: [], actions: [], providers: [], routes: [], fetches: [], agentRuns: [],
    importMap: new Map(), hookBindings: new Map(), methodBindings: new Map(), calls: [], handlerRefs: [],
  };
}

export interface ScriptSource {
  /** A file name whose extension tells oxc the language. */
  parseAs: string;
  code: string;
  /** Where the code starts in the file (a `.vue` script block's offset; 0 otherwise). */
  offset: number;
  position(offset: number): SourcePosition;
  /** Handler context for template expressions: the element and event they are bound to. */
  event?: { event: string; element: string };
}

const mutateMethods = new Set(['mutate', 'mutateAsync']);
const fetchCallees = new Set(['fetch', 'window.fetch', 'globalThis.fetch', 'self.fetch', '$fetch', 'useFetch', 'useLazyFetch', 'ofetch', 'ky']);
const axiosMethods = new Set(['get', 'post', 'put', 'patch', 'delete', 'head', 'request']);
const runtimePath = /\/(?:commands|queries|live|external)(?:[/?#…]|$)/;
const routeComponentKeys = new Set(['element', 'Component', 'component']);

/** Scans one script (a file, a `.vue` script block or a template expression) into `scan`. */
export function scanScript(scan: Scan, source: ScriptSource): void {
  const parsed = parseSync(source.parseAs, source.code);
  const at = (offset: number) => source.position(source.offset + offset);
  // A template expression that oxc cannot read (Vue-only syntax) is Vue's to report, not ours.
  if (source.event === undefined) for (const error of parsed.errors) scan.errors.push({ message: error.message, at: at(error.labels[0]?.start ?? 0) });

  for (const statement of parsed.module.staticImports) {
    const names = statement.entries.map((e) => ({ imported: importedName(e.importName), local: e.localName.value }));
    for (const e of statement.entries) scan.importMap.set(e.localName.value, { source: statement.moduleRequest.value, imported: importedName(e.importName) });
    scan.imports.push({
      source: statement.moduleRequest.value,
      typeOnly: statement.entries.length > 0 && statement.entries.every((e) => e.isType),
      names,
      at: at(statement.moduleRequest.start),
    });
  }

  walk(parsed.program as unknown as AstNode, (node, ancestors) => {
    switch (node.type) {
      case 'CallExpression':
        return scanCall(scan, node, ancestors, at, source);
      case 'NewExpression': {
        const callee = memberPath(node.callee)?.join('.');
        if (callee === 'EventSource' || callee === 'window.EventSource') addFetch(scan, 'EventSource', node.arguments[0], at(node.start));
        const run = agentRunCall(memberPath(node.callee), scan.importMap);
        if (run !== undefined) scan.agentRuns.push({ call: run, at: at(node.start) });
        return;
      }
      case 'FunctionDeclaration':
      case 'VariableDeclarator':
        return scanDeclaration(scan, node, at);
      case 'ExportDefaultDeclaration':
        return scanDefaultExport(scan, node, at);
      case 'ObjectExpression':
        return scanRouteObject(scan, node, ancestors, at);
      case 'JSXElement':
        return scanJsxElement(scan, node, ancestors, at);
      case 'JSXAttribute': {
        const name = node.name.type === 'JSXIdentifier' ? node.name.name : '';
        const value = node.value?.type === 'JSXExpressionContainer' ? unwrap(node.value.expression) : undefined;
        const opening = ancestors.at(-1);
        if (/^on[A-Z]/.test(name) && value?.type === 'Identifier' && opening?.type === 'JSXOpeningElement') {
          scan.handlerRefs.push({ handler: value.name, event: name, element: jsxName(opening.name) });
        }
        return;
      }
    }
  });
}

function scanCall(scan: Scan, node: AstNode, ancestors: readonly AstNode[], at: (offset: number) => SourcePosition, source: ScriptSource): void {
  const callee = memberPath(node.callee);
  const run = agentRunCall(callee, scan.importMap);
  if (run !== undefined) scan.agentRuns.push({ call: run, at: at(node.start) });

  const hook = callee === undefined ? undefined : hookName(scan, callee);
  if (hook !== undefined) {
    const index = scan.hooks.push({ hook, target: entryTarget(node.arguments[0]), component: context(scan, ancestors).component, at: at(node.start) }) - 1;
    if (commandHooks.has(hook)) bindHookResult(scan, index, ancestors.at(-1));
    return;
  }

  if (callee !== undefined) {
    const name = callee.join('.');
    if (fetchCallees.has(name)) addFetch(scan, name, node.arguments[0], at(node.start));
    else if (callee[0] === 'axios' && (callee.length === 1 || (callee.length === 2 && axiosMethods.has(callee[1]!)))) {
      const first = node.arguments[0] ? unwrap(node.arguments[0]) : undefined;
      const url = first?.type === 'ObjectExpression' ? first.properties.find((p: AstNode) => p.type === 'Property' && keyName(p) === 'url')?.value : first;
      addFetch(scan, name, url, at(node.start));
    }
    const last = callee.at(-1)!;
    if ((callee.length === 2 && mutateMethods.has(last)) || callee.length === 1) {
      const ctx = context(scan, ancestors);
      scan.calls.push({ callee, ...ctx, ...(ctx.event === null && source.event ? source.event : {}), at: at(node.start) });
    }
  }

  // TanStack Router: createFileRoute('/notes')({ component: Notes })
  const inner = unwrap(node.callee);
  if (inner.type === 'CallExpression') {
    const factory = memberPath(inner.callee)?.at(-1);
    const path = stringValue(inner.arguments[0]);
    const options = node.arguments[0] ? unwrap(node.arguments[0]) : undefined;
    if ((factory === 'createFileRoute' || factory === 'createLazyFileRoute') && path !== undefined && options?.type === 'ObjectExpression') {
      scan.routes.push({ path, components: routeComponents(options), source: 'tanstack-router', at: at(node.start) });
    }
  }
}

/** `useCommand`, `fw.useCommand`, or a local alias of an imported hook. */
function hookName(scan: Scan, callee: string[]): HookName | undefined {
  let name: string | undefined;
  if (callee.length === 1) {
    const imported = scan.importMap.get(callee[0]!);
    name = imported && imported.imported !== 'default' && imported.imported !== '*' ? imported.imported : callee[0];
  } else if (callee.length === 2 && scan.importMap.get(callee[0]!)?.imported === '*') {
    name = callee[1];
  }
  return name !== undefined && Object.hasOwn(hookKinds, name) ? (name as HookName) : undefined;
}

function entryTarget(arg: AstNode | undefined): EntryTarget {
  const name = stringValue(arg);
  if (name !== undefined) return { kind: 'name', name };
  const path = arg ? memberPath(arg) : undefined;
  const section = path?.at(-2);
  if (path !== undefined && path.length >= 2 && section !== undefined && Object.hasOwn(sectionKinds, section)) {
    return { kind: 'ref', section: section as keyof typeof sectionKinds, name: path.at(-1)! };
  }
  return { kind: 'dynamic' };
}

function bindHookResult(scan: Scan, index: number, parent: AstNode | undefined): void {
  if (parent?.type !== 'VariableDeclarator') return;
  if (parent.id.type === 'Identifier') scan.hookBindings.set(parent.id.name, index);
  if (parent.id.type !== 'ObjectPattern') return;
  for (const property of parent.id.properties) {
    const method = property.type === 'Property' ? keyName(property) : undefined;
    const value = property.value?.type === 'AssignmentPattern' ? property.value.left : property.value;
    if ((method === 'mutate' || method === 'mutateAsync') && value?.type === 'Identifier') scan.methodBindings.set(value.name, { hook: index, method });
  }
}

function addFetch(scan: Scan, api: string, arg: AstNode | undefined, at: SourcePosition): void {
  const url = staticText(arg);
  if (url !== undefined && runtimePath.test(url)) scan.fetches.push({ api, url, at });
}

function scanDeclaration(scan: Scan, node: AstNode, at: (offset: number) => SourcePosition): void {
  if (scan.fileComponent !== null) return;
  const name = node.type === 'FunctionDeclaration' ? node.id?.name : node.id.type === 'Identifier' ? node.id.name : undefined;
  if (typeof name !== 'string' || !isComponentName(name)) return;
  if (node.type === 'VariableDeclarator') {
    const init = node.init ? unwrap(node.init) : undefined;
    // `const Notes = () => …`, or wrapped: `memo(function …)`, `forwardRef((props, ref) => …)`.
    const fn = init && (isFunction(init) ? init : init.type === 'CallExpression' ? init.arguments.find((a: AstNode) => isFunction(unwrap(a))) : undefined);
    if (!fn) return;
  }
  scan.components.push({ name, at: at(node.start) });
}

function scanDefaultExport(scan: Scan, node: AstNode, at: (offset: number) => SourcePosition): void {
  const declaration = unwrap(node.declaration);
  if (declaration.type === 'Identifier') scan.defaultExport = declaration.name;
  else if (isFunction(declaration) && declaration.id?.type === 'Identifier') scan.defaultExport = declaration.id.name;
  else if (isFunction(declaration) && scan.fileComponent === null) {
    // `export default function () {…}` is a component without a name of its own: call it `default`.
    scan.defaultExport = 'default';
    scan.components.push({ name: 'default', at: at(node.start) });
  }
}

/** React Router / TanStack route objects: `{ path: '/notes', element: <Notes /> }`, nested through `children`. */
function scanRouteObject(scan: Scan, node: AstNode, ancestors: readonly AstNode[], at: (offset: number) => SourcePosition): void {
  const own = routeObjectPath(node);
  if (own === undefined || !node.properties.some((p: AstNode) => p.type === 'Property' && routeComponentKeys.has(keyName(p) ?? ''))) return;
  // Inside createFileRoute(…)(…) the path comes from the factory, recorded by scanCall.
  const call = ancestors.at(-1);
  if (call?.type === 'CallExpression' && unwrap(call.callee).type === 'CallExpression') return;
  const parents = ancestors.filter((a) => a.type === 'ObjectExpression').map(routeObjectPath).filter((p): p is string => p !== undefined);
  const isTanstack = node.properties.some((p: AstNode) => p.type === 'Property' && keyName(p) === 'getParentRoute');
  scan.routes.push({ path: joinPaths([...parents, own]), components: routeComponents(node), source: isTanstack ? 'tanstack-router' : 'react-router', at: at(node.start) });
}

/** The path a route object adds (`''` for an index route), undefined for objects that are not routes. */
function routeObjectPath(node: AstNode): string | undefined {
  let path: string | undefined;
  let index = false;
  for (const property of node.properties) {
    if (property.type !== 'Property') continue;
    const key = keyName(property);
    if (key === 'path') path = stringValue(property.value);
    if (key === 'index' && property.value.type === 'Literal' && property.value.value === true) index = true;
  }
  return path ?? (index ? '' : undefined);
}

function routeComponents(node: AstNode): string[] {
  const names: string[] = [];
  for (const property of node.properties) {
    if (property.type !== 'Property' || !routeComponentKeys.has(keyName(property) ?? '')) continue;
    names.push(...componentNamesIn(property.value));
  }
  return names;
}

/** Component names an expression renders: `<Layout><Notes /></Layout>` → Layout, Notes; `Notes` → Notes. */
function componentNamesIn(value: AstNode): string[] {
  const target = unwrap(value);
  if (target.type === 'Identifier') return isComponentName(target.name) ? [target.name] : [];
  const names: string[] = [];
  walk(target, (node) => {
    if (node.type !== 'JSXOpeningElement') return;
    const name = jsxName(node.name);
    if (isComponentName(name)) names.push(name);
  });
  return names;
}

function scanJsxElement(scan: Scan, node: AstNode, ancestors: readonly AstNode[], at: (offset: number) => SourcePosition): void {
  const opening = node.openingElement;
  const name = jsxName(opening.name);
  if (!isComponentName(name)) return;
  const imported = scan.importMap.get(name.split('.')[0]!);
  const canonical = imported && imported.imported !== 'default' && imported.imported !== '*' ? imported.imported : name;
  if (canonical === 'FwProvider') {
    const props = opening.attributes.flatMap((a: AstNode) => (a.type === 'JSXAttribute' && a.name.type === 'JSXIdentifier' ? [a.name.name] : []));
    scan.providers.push({ kind: 'FwProvider', props: props.sort(), at: at(node.start) });
  }
  if (name === 'Route') {
    const route = jsxRoute(node, ancestors);
    if (route !== undefined) scan.routes.push({ ...route, at: at(node.start) });
  }
  scan.renders.push({ from: context(scan, ancestors).component, tag: name, at: at(node.start) });
}

function jsxRoute(node: AstNode, ancestors: readonly AstNode[]): Pick<RouteFact, 'path' | 'components' | 'source'> | undefined {
  const own = jsxRoutePath(node);
  if (own === undefined) return undefined;
  const parents = ancestors.filter((a) => a.type === 'JSXElement' && jsxName(a.openingElement.name) === 'Route').map(jsxRoutePath).filter((p): p is string => p !== undefined);
  const components: string[] = [];
  for (const attribute of node.openingElement.attributes) {
    if (attribute.type !== 'JSXAttribute' || attribute.name.type !== 'JSXIdentifier' || !routeComponentKeys.has(attribute.name.name)) continue;
    if (attribute.value?.type === 'JSXExpressionContainer') components.push(...componentNamesIn(attribute.value.expression));
  }
  return { path: joinPaths([...parents, own]), components, source: 'react-router' };
}

function jsxRoutePath(node: AstNode): string | undefined {
  let path: string | undefined;
  let index = false;
  for (const attribute of node.openingElement.attributes) {
    if (attribute.type !== 'JSXAttribute' || attribute.name.type !== 'JSXIdentifier') continue;
    if (attribute.name.name === 'path') path = attribute.value?.type === 'Literal' ? String(attribute.value.value) : stringValue(attribute.value?.expression);
    if (attribute.name.name === 'index') index = attribute.value === null || attribute.value?.expression?.value === true;
  }
  return path ?? (index ? '' : undefined);
}

/** Joins nested route paths: `['/', 'notes', ':id']` → `/notes/:id`; an absolute child path starts over. */
export function joinPaths(parts: readonly string[]): string {
  let path = '';
  for (const part of parts) {
    if (part.startsWith('/')) path = part;
    else if (part !== '') path = `${path.replace(/\/$/, '')}/${part}`;
  }
  return path === '' ? '/' : path;
}

/**
 * Where a node sits: the component it belongs to, the named function (handler) it is in, and the
 * JSX event attribute (`onClick={() => …}`) it is inline in.
 */
function context(scan: Scan, ancestors: readonly AstNode[]): { component: string | null; handler: string | null; event: string | null; element: string | null } {
  let component: string | null = null;
  let handler: string | null = null;
  let event: string | null = null;
  let element: string | null = null;
  for (let i = ancestors.length - 1; i >= 0; i--) {
    const node = ancestors[i]!;
    if (node.type === 'JSXAttribute' && event === null && handler === null && node.name.type === 'JSXIdentifier' && /^on[A-Z]/.test(node.name.name)) {
      event = node.name.name;
      const opening = ancestors[i - 1];
      element = opening?.type === 'JSXOpeningElement' ? jsxName(opening.name) : null;
    }
    if (!isFunction(node)) continue;
    const name = enclosingFunctionName(node, ancestors, i);
    if (name !== undefined && isComponentName(name) && scan.fileComponent === null) {
      component = name;
      break;
    }
    if (name !== undefined && handler === null && event === null) handler = name;
  }
  return { component: component ?? scan.fileComponent, handler, event, element };
}

function enclosingFunctionName(fn: AstNode, ancestors: readonly AstNode[], index: number): string | undefined {
  const parent = ancestors[index - 1];
  const own = functionName(fn, parent);
  if (own !== undefined) return own;
  // `const save = useCallback(() => …)`, `const Notes = memo(() => …)`
  if (parent?.type === 'CallExpression') return functionName(fn, ancestors[index - 2]) ?? declaratorName(ancestors[index - 2]);
  if (parent?.type === 'ExportDefaultDeclaration') return 'default';
  return undefined;
}

function declaratorName(node: AstNode | undefined): string | undefined {
  return node?.type === 'VariableDeclarator' && node.id.type === 'Identifier' ? node.id.name : undefined;
}

/** Links `x.mutate(…)` / `mutate(…)` calls to the command hooks whose results they use: the file's UI actions. */
export function finishActions(scan: Scan): void {
  for (const call of scan.calls) {
    let link: { hook: number; method: 'mutate' | 'mutateAsync' } | undefined;
    if (call.callee.length === 2) {
      const hook = scan.hookBindings.get(call.callee[0]!);
      if (hook !== undefined) link = { hook, method: call.callee[1] as 'mutate' | 'mutateAsync' };
    } else {
      link = scan.methodBindings.get(call.callee[0]!);
    }
    if (link === undefined) continue;
    const wired = call.event === null && call.handler !== null ? scan.handlerRefs.find((r) => r.handler === call.handler) : undefined;
    scan.actions.push({
      hook: link.hook,
      method: link.method,
      handler: call.handler,
      event: wired?.event ?? call.event,
      element: wired?.element ?? call.element,
      component: call.component,
      at: call.at,
    });
  }
}
