/**
 * A small, untyped view of oxc's ESTree output for the frontend analysis, which looks at many node
 * kinds (JSX, objects, calls, declarations) and needs each node's ancestors: one generic walk with an
 * ancestor stack is simpler here than oxc's typed `Visitor`.
 */
export interface AstNode {
  type: string;
  start: number;
  end: number;
  [key: string]: any;
}

/** Calls `enter(node, ancestors)` for every node below `root` in source order; `ancestors[0]` is the root. */
export function walk(root: AstNode, enter: (node: AstNode, ancestors: readonly AstNode[]) => void): void {
  const ancestors: AstNode[] = [];
  const visit = (node: AstNode) => {
    enter(node, ancestors);
    ancestors.push(node);
    for (const key in node) {
      if (key === 'parent') continue;
      const value = node[key];
      if (Array.isArray(value)) {
        for (const item of value) if (isNode(item)) visit(item);
      } else if (isNode(value)) {
        visit(value);
      }
    }
    ancestors.pop();
  };
  visit(root);
}

function isNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

/** Looks through parentheses, `as`/`satisfies`/`!` and `await`, which do not change what a value is. */
export function unwrap(node: AstNode): AstNode {
  let current = node;
  for (;;) {
    switch (current.type) {
      case 'ParenthesizedExpression':
      case 'TSAsExpression':
      case 'TSSatisfiesExpression':
      case 'TSNonNullExpression':
      case 'TSTypeAssertion':
      case 'ChainExpression':
        current = current.expression;
        break;
      case 'AwaitExpression':
        current = current.argument;
        break;
      default:
        return current;
    }
  }
}

/** The value of a string literal or a template literal without expressions. */
export function stringValue(node: AstNode | null | undefined): string | undefined {
  if (!node) return undefined;
  const target = unwrap(node);
  if (target.type === 'Literal' && typeof target.value === 'string') return target.value;
  if (target.type === 'TemplateLiteral' && target.expressions.length === 0) return target.quasis[0]?.value.cooked ?? undefined;
  return undefined;
}

/**
 * The static text of a URL-like expression, with `…` for each dynamic part: `'/commands/x'`,
 * `` `${base}/live/${name}` `` → `…/live/…`, `base + '/queries/q'` → `…/queries/q`. Undefined when the
 * expression has no static text at all.
 */
export function staticText(node: AstNode | null | undefined): string | undefined {
  if (!node) return undefined;
  const target = unwrap(node);
  const literal = stringValue(target);
  if (literal !== undefined) return literal;
  if (target.type === 'TemplateLiteral') {
    let text = '';
    target.quasis.forEach((quasi: AstNode, i: number) => {
      text += quasi.value.cooked ?? quasi.value.raw ?? '';
      if (i < target.expressions.length) text += '…';
    });
    return text;
  }
  if (target.type === 'BinaryExpression' && target.operator === '+') {
    const left = staticText(target.left);
    const right = staticText(target.right);
    if (left === undefined && right === undefined) return undefined;
    return `${left ?? '…'}${right ?? '…'}`;
  }
  if (target.type === 'NewExpression' && target.callee.type === 'Identifier' && target.callee.name === 'URL') {
    return staticText(target.arguments[0]);
  }
  return undefined;
}

/** `a.b.c` → `['a', 'b', 'c']` (non-computed members and `this` only); undefined for anything else. */
export function memberPath(node: AstNode): string[] | undefined {
  const target = unwrap(node);
  if (target.type === 'Identifier') return [target.name];
  if (target.type === 'ThisExpression') return ['this'];
  if (target.type === 'MemberExpression' && !target.computed && target.property.type === 'Identifier') {
    const object = memberPath(target.object);
    return object === undefined ? undefined : [...object, target.property.name];
  }
  if (target.type === 'MemberExpression' && target.computed) {
    const key = stringValue(target.property);
    const object = memberPath(target.object);
    return key === undefined || object === undefined ? undefined : [...object, key];
  }
  return undefined;
}

/** The name of a property key (`a`, `'a'`), undefined for computed keys. */
export function keyName(property: AstNode): string | undefined {
  if (property.computed) return undefined;
  const key = property.key as AstNode;
  if (key.type === 'Identifier') return key.name;
  return typeof key.value === 'string' ? key.value : undefined;
}

/** The name of a JSX element: `Route`, `Foo.Bar`, `form`. */
export function jsxName(name: AstNode): string {
  switch (name.type) {
    case 'JSXIdentifier':
      return name.name;
    case 'JSXMemberExpression':
      return `${jsxName(name.object)}.${name.property.name}`;
    case 'JSXNamespacedName':
      return `${name.namespace.name}:${name.name.name}`;
    default:
      return '';
  }
}

/** Whether a name looks like a component (`NoteList`), not an element or a hook. */
export function isComponentName(name: string): boolean {
  return /^[A-Z]/.test(name);
}

/** The name a function node goes by: its own, or the variable, property or default export holding it. */
export function functionName(fn: AstNode, parent: AstNode | undefined): string | undefined {
  if (fn.id?.type === 'Identifier') return fn.id.name;
  if (parent === undefined) return undefined;
  if (parent.type === 'VariableDeclarator' && parent.id.type === 'Identifier') return parent.id.name;
  if ((parent.type === 'Property' || parent.type === 'MethodDefinition' || parent.type === 'PropertyDefinition') && parent.value === fn) {
    return keyName(parent);
  }
  if (parent.type === 'AssignmentExpression' && parent.left.type === 'Identifier') return parent.left.name;
  return undefined;
}

export function isFunction(node: AstNode): boolean {
  return node.type === 'FunctionDeclaration' || node.type === 'FunctionExpression' || node.type === 'ArrowFunctionExpression';
}

/** The exported name an import binding takes: its name, `default`, or `*` for a namespace. */
export function importedName(name: { kind: string; name: string | null }): string {
  if (name.kind === 'Default') return 'default';
  if (name.kind === 'NamespaceObject') return '*';
  return name.name ?? 'default';
}
