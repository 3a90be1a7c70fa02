/**
 * Finds the live groups a log row concerns without looking at the ones it does not: groups are indexed
 * by tenant → table → one `IN` condition's column → value. A log row looks up each changed value of
 * each indexed column (hash lookups, independent of how many groups there are), plus the groups that
 * read the table whole and the few whose accesses have only ranges; each candidate is then checked
 * against its whole read set (`readSetMatches`). Sound by construction: an access is found through the
 * column of one of its own conditions, which any row it can read must satisfy.
 *
 * @example
 *   const index = createReadIndex<Group>();
 *   index.set(group, group.tenantId, readSet);
 *   for (const group of index.match({ table: 'notes', tenantId, changes })) schedule(group);
 */
import { canonicalValue, readSetMatches, type Access, type CapturedValue, type ChangedValues, type ReadSet } from './read-set.ts';

export interface IndexedChange {
  table: string;
  /** null: a write to a table without tenants, or a TRUNCATE: it concerns every tenant. */
  tenantId: string | null;
  changes: ChangedValues;
}

export interface ReadIndex<G> {
  /** Indexes (or re-indexes) `group` under its tenant with its read set. */
  set(group: G, tenantId: string | null, readSet: ReadSet): void;
  delete(group: G): void;
  /** The groups one log row concerns, each once. */
  match(change: IndexedChange, into?: Set<G>): Set<G>;
  /** The read set `group` is indexed with. */
  readSet(group: G): ReadSet | undefined;
  /** Groups indexed, for status output. */
  readonly size: number;
}

interface TableEntries<G> {
  /** Groups reading the table whole. */
  all: Set<G>;
  /** Groups whose accesses have no IN condition (ranges only): checked one by one. */
  scanned: Set<G>;
  /** column → value → groups with an access indexed by that column and value. */
  byColumn: Map<string, Map<CapturedValue, Set<G>>>;
}

/** null (SQL NULL) and strings share one key space; null gets a key no string can be. */
const NULL_KEY = '\u0000null';

/** Tenants as the log prints them (a caller's tenant id may be spelled in upper case; tenant_id is a uuid). */
export const tenantKey = (tenantId: string | null): string | null => (tenantId === null ? null : (canonicalValue('uuid', tenantId) ?? tenantId));

export function createReadIndex<G>(): ReadIndex<G> {
  const tenants = new Map<string | null, Map<string, TableEntries<G>>>();
  const indexed = new Map<G, { tenantId: string | null; readSet: ReadSet; keys: Array<() => void> }>();

  const entriesOf = (tenantId: string | null, table: string): TableEntries<G> => {
    let tables = tenants.get(tenantId);
    if (!tables) tenants.set(tenantId, (tables = new Map()));
    let entries = tables.get(table);
    if (!entries) tables.set(table, (entries = { all: new Set(), scanned: new Set(), byColumn: new Map() }));
    return entries;
  };

  const remove = (group: G) => {
    const known = indexed.get(group);
    if (!known) return;
    for (const undo of known.keys) undo();
    indexed.delete(group);
  };

  const addTo = <K>(map: Map<K, Set<G>>, key: K, group: G, undo: Array<() => void>) => {
    let set = map.get(key);
    if (!set) map.set(key, (set = new Set()));
    set.add(group);
    undo.push(() => {
      set!.delete(group);
      if (set!.size === 0 && map.get(key) === set) map.delete(key);
    });
  };

  const indexAccess = (entries: TableEntries<G>, access: Access, group: G, undo: Array<() => void>) => {
    // The IN condition with the fewest values is the sharpest key.
    let best: { column: string; values: ReadonlySet<CapturedValue> } | undefined;
    for (const condition of access.conditions) {
      if (condition.kind === 'in' && (!best || condition.values.size < best.values.size)) best = condition;
    }
    if (!best) {
      entries.scanned.add(group);
      undo.push(() => entries.scanned.delete(group));
      return;
    }
    let values = entries.byColumn.get(best.column);
    if (!values) entries.byColumn.set(best.column, (values = new Map()));
    const column = best.column;
    for (const value of best.values) {
      addTo(values, value === null ? NULL_KEY : value, group, undo);
    }
    undo.push(() => {
      if (entries.byColumn.get(column)?.size === 0) entries.byColumn.delete(column);
    });
  };

  return {
    set(group, tenantId, readSet) {
      remove(group);
      const undo: Array<() => void> = [];
      for (const [table, accesses] of readSet) {
        const entries = entriesOf(tenantKey(tenantId), table);
        if (accesses.some((access) => access.conditions.length === 0)) {
          entries.all.add(group);
          undo.push(() => entries.all.delete(group));
          continue;
        }
        for (const access of accesses) indexAccess(entries, access, group, undo);
      }
      indexed.set(group, { tenantId, readSet, keys: undo });
    },
    delete: remove,
    readSet: (group) => indexed.get(group)?.readSet,
    get size() {
      return indexed.size;
    },
    match(change, into = new Set<G>()) {
      const scopes = change.tenantId === null ? [...tenants.values()] : [tenants.get(tenantKey(change.tenantId))].filter((scope) => scope !== undefined);
      for (const tables of scopes) {
        const entries = tables.get(change.table);
        if (!entries) continue;
        for (const group of entries.all) into.add(group);
        const candidates = new Set<G>(entries.scanned);
        for (const [column, byValue] of entries.byColumn) {
          const values = change.changes === null || !Object.hasOwn(change.changes, column) ? null : change.changes[column];
          if (values === null || values === undefined) {
            // Any value may have changed in this column: every group keyed by it is a candidate.
            for (const groups of byValue.values()) for (const group of groups) candidates.add(group);
            continue;
          }
          for (const value of values) {
            for (const group of byValue.get(value === null ? NULL_KEY : value) ?? []) candidates.add(group);
          }
        }
        for (const group of candidates) {
          if (into.has(group)) continue;
          if (readSetMatches(indexed.get(group)?.readSet.get(change.table), change.changes)) into.add(group);
        }
      }
      return into;
    },
  };
}
