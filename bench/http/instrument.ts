/**
 * Counts database round trips inside a server process, whoever makes them (fw, Kysely or a bare
 * handler). For `pg`, a round trip is a write that asks the server to answer: a simple-protocol Query
 * message, or a Sync or Flush after extended-protocol messages — so a parse/bind/execute/sync batch is
 * one, and so is fw's pipelined write of a transaction's BEGIN, claim and first statement (and the
 * previous transaction's deferred ROLLBACK), which ends with a Flush. For PGlite one `query`/`exec`
 * call is one trip into the WASM engine.
 *
 * Statements (PostgreSQL): one per extended-protocol Parse and one per simple-protocol Query message
 * (which may hold several statements; neither fw nor the variants send such a query per request).
 */
import type { PGlite } from '@electric-sql/pglite';
import type { DatabaseKind } from './config.ts';

export interface DatabaseCallCounter {
  calls: number;
  /** Statements sent (PostgreSQL only; 0 on PGlite). */
  statements: number;
  /** The PGlite instance seen last (the bare variant queries it directly; fw does not expose it). */
  pglite: PGlite | undefined;
}

export async function countDatabaseCalls(kind: DatabaseKind): Promise<DatabaseCallCounter> {
  const counter: DatabaseCallCounter = { calls: 0, statements: 0, pglite: undefined };
  if (kind === 'postgres') {
    const { default: pg } = await import('pg');
    const connection = (pg as unknown as { Connection: { prototype: Record<'query' | 'sync' | 'flush' | 'parse', (...a: unknown[]) => unknown> } }).Connection.prototype;
    for (const method of ['query', 'sync', 'flush', 'parse'] as const) {
      const original = connection[method];
      connection[method] = function counted(this: unknown, ...args: unknown[]) {
        if (method !== 'parse') counter.calls += 1;
        if (method === 'parse' || method === 'query') counter.statements += 1;
        return original.apply(this, args);
      };
    }
  } else {
    const { PGlite } = await import('@electric-sql/pglite');
    // query and exec live on PGlite's base class; neither calls the other.
    let owner: object | null = PGlite.prototype;
    while (owner && !Object.hasOwn(owner, 'query')) owner = Object.getPrototypeOf(owner) as object | null;
    if (!owner) throw new Error('bench/http: PGlite#query not found; the counting wrapper needs updating.');
    const target = owner as Record<'query' | 'exec' | 'execProtocolStream', (...a: unknown[]) => unknown>;
    // A call into the engine is a query/exec, or a batch fw sends itself (execProtocolStream outside them).
    let depth = 0;
    for (const method of ['query', 'exec'] as const) {
      const original = target[method];
      target[method] = async function counted(this: PGlite, ...args: unknown[]) {
        counter.calls += 1;
        counter.pglite = this;
        depth++;
        try {
          return await original.apply(this, args);
        } finally {
          depth--;
        }
      };
    }
    let streamOwner: object | null = PGlite.prototype;
    while (streamOwner && !Object.hasOwn(streamOwner, 'execProtocolStream')) streamOwner = Object.getPrototypeOf(streamOwner) as object | null;
    if (streamOwner) {
      const streams = streamOwner as Record<'execProtocolStream', (...a: unknown[]) => unknown>;
      const original = streams.execProtocolStream;
      streams.execProtocolStream = function counted(this: PGlite, ...args: unknown[]) {
        if (depth === 0) counter.calls += 1;
        return original.apply(this, args);
      };
    }
  }
  return counter;
}
