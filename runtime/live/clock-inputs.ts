/**
 * The clock read through a value. PostgreSQL reads the clock when it parses a date/time input that
 * says `now`, `today`, `tomorrow` or `yesterday` (alone or with a time: `'today 10:00'`), and in
 * one-argument `age(ts)` (`current_date - ts`). Such a value changes its meaning as time passes with no
 * write, exactly like `now()`: `where('due', '<', args.before)` with a client sending `'now'` would
 * keep a row that became due out of view for good. So they count as clock reads wherever they reach the
 * SQL — a parameter, a literal, a raw fragment — and the liveQuery must declare `refreshMs`.
 *
 * `epoch`, `infinity` and `-infinity` are special inputs too, but constants: they mean the same
 * instant whenever they are parsed, so they read no clock.
 *
 * A parameter is a string; fw sees no type for it. One compared with a column the schema types as
 * anything but a date or time (`title = 'today'`) is text, not an instant, and does not count; anywhere
 * else a string that spells a special input does (a false positive asks for `refreshMs`, a miss would
 * be stale data).
 */
import type { OperationNode } from 'kysely';
import type { Schema } from '../core/schema.ts';

/** A word PostgreSQL's date/time parser replaces with a reading of the clock. */
const CLOCK_WORD = /(?:^|[^a-z])(now|today|tomorrow|yesterday)(?![a-z])/i;
/** Date/time inputs are short; a longer string (a sentence that says "today") is no instant. */
const MAX_INPUT = 64;

/** True when `value`, parsed as a date or time by PostgreSQL, reads the clock. */
export function isClockInput(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_INPUT && CLOCK_WORD.test(value);
}

/**
 * The clock reads that values and one-argument `age` bring into a statement (`'now'`, `age(…)`), as
 * shown to the developer; `schema` says which columns are no date or time.
 */
export function clockInputs(root: OperationNode, schema: Schema | undefined): string[] {
  const found = new Set<string>();
  const untimed = untimedColumns(schema);
  const value = (v: unknown) => {
    if (isClockInput(v)) found.add(`'${v}'`);
  };
  const walk = (node: OperationNode, exempt: boolean): void => {
    switch (node.kind) {
      case 'ValueNode':
        if (!exempt) value((node as unknown as { value: unknown }).value);
        return;
      case 'PrimitiveValueListNode':
        if (!exempt) for (const v of (node as unknown as { values: unknown[] }).values) value(v);
        return;
      case 'FunctionNode': {
        const { func, arguments: args } = node as unknown as { func: string; arguments: readonly OperationNode[] };
        if (/^(pg_catalog\.)?age$/i.test(func) && args.length === 1) found.add('age(…)');
        exempt = false; // its arguments are no longer the compared value
        break;
      }
      case 'RawNode': {
        const fragments = (node as unknown as { sqlFragments: readonly string[] }).sqlFragments;
        for (const text of rawClockInputs(fragments.join(' '))) found.add(text);
        break;
      }
      case 'BinaryOperationNode': {
        // `title = 'today'`: a value compared with a column that holds no date or time is not parsed as one.
        const { leftOperand, rightOperand } = node as unknown as { leftOperand: OperationNode; rightOperand: OperationNode };
        walk(leftOperand, exempt || isUntimed(rightOperand, untimed));
        walk(rightOperand, exempt || isUntimed(leftOperand, untimed));
        return;
      }
      case 'ValueListNode':
      case 'AndNode':
      case 'ParensNode':
        break; // lists of values keep the exemption (`title in ('today', 'now')`)
      default:
        exempt = false;
    }
    for (const child of Object.values(node)) {
      if (Array.isArray(child)) {
        for (const item of child) if (isNode(item)) walk(item, exempt);
      } else if (isNode(child)) walk(child, exempt);
    }
  };
  walk(root, false);
  return [...found].sort();
}

/** Quoted literals that spell a special input, and one-argument `age(…)`, in raw SQL text. */
export function rawClockInputs(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/'((?:[^']|'')*)'/g)) if (isClockInput(match[1])) found.push(`'${match[1]}'`);
  const code = text.replace(/'(?:[^']|'')*'/g, "''");
  for (const match of code.matchAll(/(?<![A-Za-z0-9_$"])(?:pg_catalog\s*\.\s*)?age\s*\(/gi)) {
    if (topLevelArguments(code, match.index + match[0].length) === 1) found.push('age(…)');
  }
  return found;
}

/** How many arguments the call whose `(` ends just before `start` has (commas outside nested parentheses). */
function topLevelArguments(code: string, start: number): number {
  let depth = 0;
  let count = 1;
  for (let i = start; i < code.length; i++) {
    const c = code[i];
    if (c === '(') depth++;
    else if (c === ')') {
      if (depth === 0) return count;
      depth--;
    } else if (c === ',' && depth === 0) count++;
  }
  return count;
}

/** Column names that, in every table that has one, hold no date or time. */
function untimedColumns(schema: Schema | undefined): ReadonlySet<string> {
  const kinds = new Map<string, boolean>([['tenant_id', true]]);
  for (const table of Object.values(schema?.tables ?? {})) {
    for (const [name, column] of Object.entries(table.columns)) {
      const untimed = column.spec.kind !== 'timestamptz' && column.spec.kind !== 'date';
      kinds.set(name, (kinds.get(name) ?? true) && untimed);
    }
  }
  return new Set([...kinds].filter(([, untimed]) => untimed).map(([name]) => name));
}

function isUntimed(node: OperationNode, untimed: ReadonlySet<string>): boolean {
  const column = node.kind === 'ReferenceNode' ? (node as unknown as { column: OperationNode }).column : node;
  if (column.kind !== 'ColumnNode') return false;
  return untimed.has((column as unknown as { column: { name: string } }).column.name);
}

function isNode(value: unknown): value is OperationNode {
  return typeof value === 'object' && value !== null && typeof (value as { kind?: unknown }).kind === 'string';
}
