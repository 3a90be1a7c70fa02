import type { KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import type { Schema } from '../core/schema.ts';
import { clockInputs } from './clock-inputs.ts';
import { functionsInText } from './function-reads.ts';
import { createReadSetBuilder, type Access } from './read-set.ts';
import type { TextSemantics } from './text-semantics.ts';

/**
 * Records the tables a liveQuery run reads, from the query trees Kysely builds, so the hub knows which
 * writes concern it. A statement written wholly in raw SQL (`sql\`…\`.execute(ctx.db)`) has no tree to
 * read: it is counted, and the liveQuery must then declare its tables (`liveQuery({ reads: [...] })`).
 *
 * @example
 *   const recorder = createReadRecorder();
 *   await runEntry(db, entry, { auth, traceId, args, plugins: [recorder] });
 *   recorder.tables; // Set { 'notes' }
 */
export interface ReadRecorder extends KyselyPlugin {
  readonly tables: ReadonlySet<string>;
  /** Names the statements gave their CTEs (`with recent as (…)`): a FROM may name one without naming a table. */
  readonly cteNames: ReadonlySet<string>;
  /** Tables of another schema (`auth.users`): fw captures writes to public tables only. */
  readonly otherSchemaTables: ReadonlySet<string>;
  /** Functions the statements call (`eb.fn`, aggregates, and calls in raw fragments), lower-cased. */
  readonly functions: ReadonlySet<string>;
  /** Values that read the clock when PostgreSQL parses them (`'now'`, `'today'`, one-argument `age(…)`: clock-inputs.ts). */
  readonly clockInputs: ReadonlySet<string>;
  /** Statements that were raw SQL at their root, or held a raw subquery, whose tables cannot be known. */
  readonly rawStatements: number;
  /** The run's read set so far (table → accesses); empty without a schema. */
  readSet(): Map<string, Access[]>;
  /** The statements of the run, as Kysely built them (multiplex.ts sends those of many groups as one). */
  readonly statements: readonly RootOperationNode[];
}

/** `text`: what the database lets fw assume of text (text-semantics.ts); without it, text is only compared for equality. */
export function createReadRecorder(schema?: Schema, text?: TextSemantics): ReadRecorder {
  const found: Found = { tables: new Set(), cteNames: new Set(), otherSchemaTables: new Set(), functions: new Set(), rawQueries: 0 };
  const reads = createReadSetBuilder(schema, text);
  let rawStatements = 0;
  const statements: RootOperationNode[] = [];
  const clock = new Set<string>();
  return {
    statements,
    clockInputs: clock,
    tables: found.tables,
    cteNames: found.cteNames,
    otherSchemaTables: found.otherSchemaTables,
    functions: found.functions,
    get rawStatements() {
      return rawStatements;
    },
    readSet: () => reads.build(),
    transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
      const before = found.rawQueries;
      if (node.kind === 'RawNode') rawStatements++;
      else {
        collectTables(node, found);
        if (found.rawQueries > before) rawStatements++;
      }
      for (const input of clockInputs(node, schema)) clock.add(input);
      reads.addStatement(node);
      statements.push(node);
      return node;
    },
    transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      return Promise.resolve(result);
    },
  };
}

/**
 * Walks an operation tree generically (every member that is a node or a list of nodes), so new node
 * kinds in Kysely are still searched. Tables in public or with no schema are recorded by name; CTE
 * names are recorded too, which is harmless (no write ever names them).
 */
interface Found {
  tables: Set<string>;
  cteNames: Set<string>;
  otherSchemaTables: Set<string>;
  functions: Set<string>;
  /** Raw fragments that are queries of their own (`select` in their text). */
  rawQueries: number;
}

/** A raw fragment that reads relations of its own; `extract(epoch from …)` or `now()` does not. */
function isQueryText(node: OperationNode): boolean {
  const fragments = (node as unknown as { sqlFragments?: readonly string[] }).sqlFragments ?? [];
  return fragments.some((fragment) => /\b(select|table)\b/i.test(fragment));
}

function collectTables(node: OperationNode, into: Found): void {
  if (node.kind === 'RawNode') {
    if (isQueryText(node)) into.rawQueries++;
    for (const name of functionsInText(((node as unknown as { sqlFragments?: readonly string[] }).sqlFragments ?? []).join(' '))) into.functions.add(name);
  }
  if (node.kind === 'FunctionNode' || node.kind === 'AggregateFunctionNode') into.functions.add((node as unknown as { func: string }).func.toLowerCase());
  // `n.title` names a table (or alias) already in a FROM or JOIN; it reads nothing new.
  if (node.kind === 'ReferenceNode') return;
  // `with recent as (…)`: the name is the CTE's, not a table's (its body is walked on its own).
  if (node.kind === 'CommonTableExpressionNameNode') {
    into.cteNames.add((node as unknown as { table: { table: { identifier: { name: string } } } }).table.table.identifier.name);
    return;
  }
  if (node.kind === 'TableNode') {
    const { table } = node as unknown as { table: { schema?: { name: string }; identifier: { name: string } } };
    if (!table.schema || table.schema.name === 'public') into.tables.add(table.identifier.name);
    else into.otherSchemaTables.add(`${table.schema.name}.${table.identifier.name}`);
  }
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) {
      for (const item of value) if (isNode(item)) collectTables(item, into);
    } else if (isNode(value)) {
      collectTables(value, into);
    }
  }
}

function isNode(value: unknown): value is OperationNode {
  return typeof value === 'object' && value !== null && typeof (value as { kind?: unknown }).kind === 'string';
}
