import type { FrontendGraph } from '../analyse/frontend/graph.ts';

/**
 * The generated files record the contract, not where in a file things are: a line added above a hook
 * call must not make `fw generate --check` (and so `fw check`, `fw verify`, CI) report drift. Hook
 * calls and UI actions are named by what they are instead of `file:line:column`
 * (`web/src/App.tsx#useLiveQuery(liveNotes)`, then `~2`, `~3` for a repeat in the same file, in source
 * order), and a place's `line`/`column` are left out. The graph in memory keeps the places: `fw inspect`, the
 * diagnostics and the dev overlay print them from there.
 *
 * @example
 *   withoutPositions(buildFrontendGraphJson(graph), stableIds(graph)).hooks[0].id
 *   // 'web/src/App.tsx#useLiveQuery(liveNotes)'
 */
export function withoutPositions<T>(value: T, ids: ReadonlyMap<string, string>): T {
  return strip(value, ids) as T;
}

/** Each hook call's and UI action's `file:line:column` id → its position-free name. */
export function stableIds(graph: Pick<FrontendGraph, 'hooks' | 'actions'>): Map<string, string> {
  const ids = new Map<string, string>();
  const taken = new Map<string, number>();
  const name = (id: string, base: string) => {
    const seen = (taken.get(base) ?? 0) + 1;
    taken.set(base, seen);
    ids.set(id, seen === 1 ? base : `${base}~${seen}`);
  };
  for (const h of byPlace(graph.hooks)) name(h.id, `${h.file}#${h.hook}(${h.entry ?? ''})`);
  for (const a of byPlace(graph.actions)) name(a.id, `${a.file}#${a.event ?? a.handler ?? a.method}:${a.method}(${a.entry ?? ''})`);
  return ids;
}

const located = /^(.*):\d+:\d+$/;

function strip(value: unknown, ids: ReadonlyMap<string, string>): unknown {
  if (typeof value === 'string') return ids.get(value) ?? value;
  if (Array.isArray(value)) return value.map((v) => strip(v, ids));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  // A place is a `file` with numeric `line` and `column` (a foreign key's `column` is a name, and stays).
  const place = 'file' in value && typeof (value as { line?: unknown }).line === 'number' && typeof (value as { column?: unknown }).column === 'number';
  for (const [key, v] of Object.entries(value)) {
    if (place && (key === 'line' || key === 'column')) continue;
    // A diagnostic's `path` is `file:line:column`; its `file` says the same without the place.
    if (key === 'path' && typeof v === 'string' && !ids.has(v)) out[key] = located.exec(v)?.[1] ?? v;
    else out[key] = strip(v, ids);
  }
  return out;
}

function byPlace<T extends { file: string; line: number; column: number }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.column - b.column));
}
