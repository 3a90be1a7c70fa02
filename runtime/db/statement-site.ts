/**
 * Where a handler's statement was written. A database error (`column "stauts" does not exist`) is
 * raised by the driver, on a later turn of the event loop: its stack is the driver's alone and never
 * reaches the app's line. The one moment the app's line is on the stack is when the statement is
 * built — Kysely compiles it synchronously inside `.execute()` (and `sql\`…\`.execute(db)`), calling
 * each plugin's `transformQuery` — so this plugin takes a stack there (formatting it is left until it
 * is read, which happens only for a failure), and the connection hands it to the error when the
 * statement fails (postgres-kysely.ts). The failure's place (entry/failure-place.ts) then reads the
 * statement's line instead of the handler's first one.
 *
 * Only in fw dev (`takeStatementSites`, turned on by the dev runtime): walking two dozen frames costs
 * tens of microseconds per statement — measured as most of a short query's server CPU regression in
 * bench/http — and a production answer never shows the place; its log says the handler's line instead.
 */
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryId, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

/** The stack taken where each statement was built, by its query id (gone with the statement). */
const sites = new WeakMap<QueryId, Error>();
/** The statement site of each failed statement's error. */
const failures = new WeakMap<object, Error>();

/** Frames to keep: Kysely's own (plugin, executor, builder, compile, execute) come before the app's. */
const FRAMES = 24;

let taking = false;

/** Take a stack where each statement is built from now on (fw dev), or stop. Process-wide, like the stack limit. */
export function takeStatementSites(on: boolean): void {
  taking = on;
}

export class StatementSitePlugin implements KyselyPlugin {
  transformQuery({ node, queryId }: PluginTransformQueryArgs): RootOperationNode {
    if (!taking) return node;
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = FRAMES;
    sites.set(queryId, new Error('the statement was built here'));
    Error.stackTraceLimit = limit;
    return node;
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result;
  }
}

/** Marks `error`, thrown by the statement `queryId`, with where that statement was built. */
export function markStatementFailure(error: unknown, queryId: QueryId | undefined): void {
  const site = queryId && sites.get(queryId);
  if (site && typeof error === 'object' && error !== null && !failures.has(error)) failures.set(error, site);
}

/** Where the failed statement behind `error` was built, when it was one of ctx.db's. */
export function statementSite(error: unknown): Error | undefined {
  return typeof error === 'object' && error !== null ? failures.get(error) : undefined;
}
