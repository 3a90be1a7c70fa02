import type { Argument, CallExpression, Expression, ObjectProperty, ParamPattern, StaticImport } from 'oxc-parser';
import { parseSync, Visitor } from 'oxc-parser';

/**
 * Which tables an entry's source file reads and writes, found by walking its syntax tree for Kysely
 * calls (never by matching text). The rules:
 *
 * - `selectFrom`, joins (`innerJoin`, `leftJoin`, `rightJoin`, `fullJoin`, `crossJoin`, the `…Lateral`
 *   forms), `using` after `deleteFrom`/`mergeInto` and `from` after `updateTable` **read** their tables.
 * - `insertInto` **writes** its table and does not read it (`returning` returns the new row; an
 *   `onConflict` upsert is counted as a write only).
 * - `updateTable`, `deleteFrom` and `mergeInto` **read and write** their target: the statement picks
 *   existing rows (with or without `where`), so its result depends on what was there.
 * - `'notes as n'` is `notes`; `'public.notes'` is `notes`; arrays of names count each name.
 * - Names declared as CTEs anywhere in the file (`with('recent', …)`, `withRecursive('t(a)', …)`) are
 *   not tables. A CTE that shadows a real table's name hides that table in the whole file.
 * - A callback or a `subquery.as('x')` argument is a derived table: the calls inside it count on
 *   their own. A `const` declared once in the file is followed to its value. Any other non-literal
 *   argument is a **dynamic table** and leaves the result partial.
 * - Raw SQL run directly (`sql\`…\`.execute(db)`) and handing `ctx`/`ctx.db` to a function imported
 *   from another file also leave the result partial: the analysis sees one file only.
 */
export type TableAccessFinding =
  | { kind: 'table'; table: string; access: Access; call: string; at: SourcePosition }
  | { kind: 'cte'; name: string; at: SourcePosition }
  | { kind: 'dynamic-table'; call: string; at: SourcePosition }
  | { kind: 'raw-sql'; at: SourcePosition }
  | { kind: 'helper-call'; callee: string; source: string; at: SourcePosition }
  | { kind: 'parse-error'; message: string; at: SourcePosition };

export type Access = 'read' | 'write' | 'read-write';

/** What the classifiers need to know about the file they are in. */
interface FileContext {
  position(offset: number): SourcePosition;
  /** `const` bindings declared once in the file, by name (null when the name is declared more than once). */
  constants: Map<string, Expression | null>;
}

/** 1-based line and column (UTF-16 code units, as editors count them). */
export interface SourcePosition {
  line: number;
  column: number;
}

const tableCalls: ReadonlyMap<string, Access> = new Map([
  ['selectFrom', 'read'],
  ['insertInto', 'write'],
  ['updateTable', 'read-write'],
  ['deleteFrom', 'read-write'],
  ['mergeInto', 'read-write'],
  ['innerJoin', 'read'],
  ['leftJoin', 'read'],
  ['rightJoin', 'read'],
  ['fullJoin', 'read'],
  ['crossJoin', 'read'],
  ['innerJoinLateral', 'read'],
  ['leftJoinLateral', 'read'],
  ['crossJoinLateral', 'read'],
]);

// `from` and `using` are common method names (Buffer.from, Array.from…): they only count on a chain
// that starts a statement which takes them.
const chainedTableCalls: ReadonlyMap<string, readonly string[]> = new Map([
  ['from', ['updateTable']],
  ['using', ['deleteFrom', 'mergeInto']],
]);

const cteCalls = new Set(['with', 'withRecursive']);

/**
 * Finds every table access in one source file.
 *
 * @example
 *   findTableAccess('src/queries/listNotes.ts', "ctx.db.selectFrom('notes as n').selectAll()")
 *   // [{ kind: 'table', table: 'notes', access: 'read', call: 'selectFrom', at: { line: 1, column: 19 } }]
 */
export function findTableAccess(fileName: string, source: string, parsed: ReturnType<typeof parseSync> = parseSync(fileName, source)): TableAccessFinding[] {
  const position = positionFinder(source);
  const context: FileContext = { position, constants: new Map() };
  const findings: TableAccessFinding[] = parsed.errors.map((error) => ({
    kind: 'parse-error' as const,
    message: error.message,
    at: position(error.labels[0]?.start ?? 0),
  }));

  const calls: CallExpression[] = [];
  const handlers: ObjectProperty[] = [];
  new Visitor({
    CallExpression: (node) => void calls.push(node),
    VariableDeclaration: (node) => {
      for (const { id, init } of node.declarations) {
        if (id.type !== 'Identifier') continue;
        const once = node.kind === 'const' && init !== null && !context.constants.has(id.name);
        context.constants.set(id.name, once ? init : null);
      }
    },
    Property: (node) => {
      if (node.type === 'Property' && !node.computed && keyName(node) === 'handler') handlers.push(node as ObjectProperty);
    },
  }).visit(parsed.program);

  const imported = importedBindings(parsed.module.staticImports);
  const contextNames = new Set(handlers.flatMap((h) => contextBindings(h.value)));
  for (const handler of handlers) {
    const value = unwrap(handler.value);
    if (value.type === 'Identifier' && imported.has(value.name)) {
      findings.push({ kind: 'helper-call', callee: value.name, source: imported.get(value.name)!, at: position(value.start) });
    }
  }

  for (const call of calls) {
    const method = calledMethod(call);
    if (method !== undefined) findings.push(...methodCallFindings(call, method, context));
    const helper = helperCallee(call, imported, contextNames);
    if (helper !== undefined) findings.push({ kind: 'helper-call', callee: helper, source: imported.get(helper)!, at: position(call.start) });
  }
  return findings;
}

function methodCallFindings(call: CallExpression, method: string, context: FileContext): TableAccessFinding[] {
  if (method === 'execute') return isRawSql(memberObject(call)) ? [{ kind: 'raw-sql', at: context.position(call.start) }] : [];
  const first = call.arguments[0];
  if (first === undefined) return [];
  if (cteCalls.has(method)) return cteNamesOf(first, context.position);
  const access = tableCalls.get(method) ?? (chainedTableCalls.get(method)?.some((m) => chainHas(call, m)) ? 'read' : undefined);
  return access === undefined ? [] : tablesOf(first, method, access, context);
}

// `at` is where the call names its table, even when the name comes from a constant declared elsewhere.
function tablesOf(arg: Argument, call: string, access: Access, context: FileContext, at = arg.start, depth = 0): TableAccessFinding[] {
  const node = unwrap(arg);
  if (node.type === 'ArrayExpression') {
    return node.elements.flatMap((element) => (element === null ? [] : tablesOf(element, call, access, context, element.start, depth)));
  }
  const literal = stringValue(node);
  if (literal !== undefined) return [{ kind: 'table', table: tableName(literal), access, call, at: context.position(at) }];
  if (isDerivedTable(node)) return [];
  const constant = node.type === 'Identifier' ? context.constants.get(node.name) : undefined;
  if (constant != null && depth < 8) return tablesOf(constant, call, access, context, at, depth + 1);
  return [{ kind: 'dynamic-table', call, at: context.position(at) }];
}

/** `'public.notes as n'` → `notes`. */
function tableName(reference: string): string {
  const withoutAlias = reference.trim().split(/\s+as\s+/i)[0]!.trim();
  return withoutAlias.slice(withoutAlias.lastIndexOf('.') + 1);
}

// A callback builds a subquery whose own calls are found separately; `subquery.as('x')` names one.
function isDerivedTable(node: Argument): boolean {
  if (node.type === 'ArrowFunctionExpression' || node.type === 'FunctionExpression') return true;
  return node.type === 'CallExpression' && calledMethod(node) === 'as' && !isRawSql(memberObject(node));
}

function cteNamesOf(arg: Argument, position: (offset: number) => SourcePosition): TableAccessFinding[] {
  const node = unwrap(arg);
  const literal = stringValue(node);
  // `with('name(col, …)', …)`; the builder form `with((cte) => cte('name').materialized(), …)`.
  if (literal !== undefined) return [{ kind: 'cte', name: literal.split('(')[0]!.trim(), at: position(node.start) }];
  if (node.type !== 'ArrowFunctionExpression' || node.body.type === 'BlockStatement') return [];
  let inner: Expression = unwrap(node.body);
  while (inner.type === 'CallExpression') {
    const name = inner.callee.type === 'Identifier' ? stringValue(inner.arguments[0]) : undefined;
    if (name !== undefined) return [{ kind: 'cte', name: name.split('(')[0]!.trim(), at: position(inner.start) }];
    const object = memberObject(inner);
    if (object === undefined) break;
    inner = object;
  }
  return [];
}

/** `sql\`…\`` or `sql.raw(…)` (with or without type arguments). */
function isRawSql(node: Expression | undefined): boolean {
  if (node === undefined) return false;
  const target = unwrap(node);
  if (target.type === 'TaggedTemplateExpression') return rootName(target.tag) === 'sql';
  return target.type === 'CallExpression' && rootName(target.callee) === 'sql';
}

/** Local names bound by value imports from modules other than fw itself, mapped to their module. */
function importedBindings(imports: StaticImport[]): Map<string, string> {
  const bindings = new Map<string, string>();
  for (const statement of imports) {
    const source = statement.moduleRequest.value;
    if (source === 'fwjs' || source.startsWith('fwjs/')) continue;
    for (const entry of statement.entries) if (!entry.isType) bindings.set(entry.localName.value, source);
  }
  return bindings;
}

/** The names under which a handler can reach the database: its context parameter, or `db` taken from it. */
function contextBindings(handler: Expression): string[] {
  const fn = unwrap(handler);
  if (fn.type !== 'ArrowFunctionExpression' && fn.type !== 'FunctionExpression') return [];
  const first: ParamPattern | undefined = fn.params[0];
  if (first === undefined) return [];
  const pattern = first.type === 'AssignmentPattern' ? first.left : first;
  if (pattern.type === 'Identifier') return [pattern.name];
  if (pattern.type !== 'ObjectPattern') return [];
  return pattern.properties.flatMap((p) =>
    p.type === 'Property' && keyName(p) === 'db' && p.value.type === 'Identifier' ? [p.value.name] : [],
  );
}

/** A call of an imported function that is handed `ctx` or `ctx.db`: what it does to tables is out of sight. */
function helperCallee(call: CallExpression, imported: Map<string, string>, contextNames: Set<string>): string | undefined {
  const callee = rootName(call.callee);
  if (callee === undefined || !imported.has(callee)) return undefined;
  const handsOverContext = call.arguments.some((arg) => {
    const node = unwrap(arg);
    if (node.type === 'Identifier') return contextNames.has(node.name);
    return node.type === 'MemberExpression' && !node.computed && node.property.type === 'Identifier' && node.property.name === 'db' &&
      node.object.type === 'Identifier' && contextNames.has(node.object.name);
  });
  return handsOverContext ? callee : undefined;
}

function calledMethod(call: CallExpression): string | undefined {
  const callee = unwrap(call.callee);
  if (callee.type !== 'MemberExpression' || callee.computed || callee.property.type !== 'Identifier') return undefined;
  return callee.property.name;
}

function memberObject(call: CallExpression): Expression | undefined {
  const callee = unwrap(call.callee);
  return callee.type === 'MemberExpression' ? callee.object : undefined;
}

/** Whether `method(…)` appears earlier in the call chain this call continues. */
function chainHas(call: CallExpression, method: string): boolean {
  let node = memberObject(call);
  while (node !== undefined) {
    const current = unwrap(node);
    if (current.type !== 'CallExpression') return false;
    if (calledMethod(current) === method) return true;
    node = memberObject(current);
  }
  return false;
}

/** The identifier an expression starts from: `sql` for `sql.raw`, `helpers` for `helpers.listFor`. */
function rootName(node: Expression): string | undefined {
  const target = unwrap(node);
  if (target.type === 'Identifier') return target.name;
  if (target.type === 'MemberExpression') return rootName(target.object);
  return undefined;
}

function keyName(property: { key: unknown }): string | undefined {
  const key = property.key as { type: string; name?: string; value?: unknown };
  if (key.type === 'Identifier') return key.name;
  return typeof key.value === 'string' ? key.value : undefined;
}

function stringValue(node: Argument | undefined): string | undefined {
  if (node === undefined) return undefined;
  const target = unwrap(node);
  if (target.type === 'Literal' && typeof target.value === 'string') return target.value;
  if (target.type === 'TemplateLiteral' && target.expressions.length === 0) return target.quasis[0]?.value.cooked ?? undefined;
  return undefined;
}

/** Looks through parentheses, `as`/`satisfies`/`!` and `await`, which do not change what is called. */
function unwrap(node: Expression): Expression;
function unwrap(node: Argument): Argument;
function unwrap(node: Argument): Argument {
  let current = node;
  for (;;) {
    switch (current.type) {
      case 'ParenthesizedExpression':
      case 'TSAsExpression':
      case 'TSSatisfiesExpression':
      case 'TSNonNullExpression':
      case 'TSTypeAssertion':
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

/** Maps a UTF-16 offset in `source` to its 1-based line and column. */
export function positionFinder(source: string): (offset: number) => SourcePosition {
  const lineStarts = [0];
  for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 10) lineStarts.push(i + 1);
  return (offset) => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (lineStarts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: offset - lineStarts[low]! + 1 };
  };
}
