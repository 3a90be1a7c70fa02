import type { KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

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
  /** Statements that were raw SQL at their root, whose tables cannot be known. */
  readonly rawStatements: number;
}

export function createReadRecorder(): ReadRecorder {
  const found: Found = { tables: new Set(), cteNames: new Set(), otherSchemaTables: new Set() };
  let rawStatements = 0;
  return {
    ...found,
    get rawStatements() {
      return rawStatements;
    },
    transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
      if (node.kind === 'RawNode') rawStatements++;
      collectTables(node, found);
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
}

function collectTables(node: OperationNode, into: Found): void {
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
