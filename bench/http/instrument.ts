/**
 * Counts database calls inside a server process, whoever makes them (fw, Kysely or a bare handler),
 * by wrapping the driver's one query method. For `pg` one `Client#query` is one network round trip
 * (a multi-statement simple query or a parse/bind/execute/sync batch both wait for one ReadyForQuery);
 * for PGlite one `query`/`exec` call is one trip into the WASM engine.
 */
import type { PGlite } from '@electric-sql/pglite';
import type { DatabaseKind } from './config.ts';

export interface DatabaseCallCounter {
  calls: number;
  /** The PGlite instance seen last (the bare variant queries it directly; fw does not expose it). */
  pglite: PGlite | undefined;
}

export async function countDatabaseCalls(kind: DatabaseKind): Promise<DatabaseCallCounter> {
  const counter: DatabaseCallCounter = { calls: 0, pglite: undefined };
  if (kind === 'postgres') {
    const { default: pg } = await import('pg');
    const original = pg.Client.prototype.query;
    pg.Client.prototype.query = function countedQuery(this: unknown, ...args: unknown[]) {
      counter.calls += 1;
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
  } else {
    const { PGlite } = await import('@electric-sql/pglite');
    // query and exec live on PGlite's base class; neither calls the other.
    let owner: object | null = PGlite.prototype;
    while (owner && !Object.hasOwn(owner, 'query')) owner = Object.getPrototypeOf(owner) as object | null;
    if (!owner) throw new Error('bench/http: PGlite#query not found; the counting wrapper needs updating.');
    const target = owner as Record<'query' | 'exec', (...a: unknown[]) => unknown>;
    for (const method of ['query', 'exec'] as const) {
      const original = target[method];
      target[method] = function counted(this: PGlite, ...args: unknown[]) {
        counter.calls += 1;
        counter.pglite = this;
        return original.apply(this, args);
      };
    }
  }
  return counter;
}
