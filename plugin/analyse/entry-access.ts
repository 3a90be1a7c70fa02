import type { TableAccessFinding } from './table-access.ts';

/** Something the analysis could not follow, with where it is (`file:line:column`). */
export type Unresolved =
  | { kind: 'dynamic-table'; call: string; at: string }
  | { kind: 'raw-sql'; at: string }
  | { kind: 'helper-call'; callee: string; source: string; at: string }
  | { kind: 'parse-error'; message: string; at: string };

/**
 * The tables one entry reads and writes (sorted, unique). `partial` means the lists are what the
 * analysis saw, and `unresolved` says what it could not see, so consumers never mistake them for complete.
 */
export type EntryAccess =
  | { kind: 'complete'; reads: string[]; writes: string[] }
  | { kind: 'partial'; reads: string[]; writes: string[]; unresolved: Unresolved[] };

/**
 * Folds the findings of an entry's file into its table access.
 *
 * @example
 *   summarizeAccess('src/commands/createNote.ts', findTableAccess(file, source))
 *   // { kind: 'complete', reads: [], writes: ['notes'] }
 */
export function summarizeAccess(file: string, findings: readonly TableAccessFinding[]): EntryAccess {
  const ctes = new Set(findings.flatMap((f) => (f.kind === 'cte' ? [f.name] : [])));
  const reads = new Set<string>();
  const writes = new Set<string>();
  const unresolved: Unresolved[] = [];
  for (const finding of findings) {
    const at = `${file}:${finding.at.line}:${finding.at.column}`;
    switch (finding.kind) {
      case 'table':
        if (ctes.has(finding.table)) break;
        if (finding.access !== 'write') reads.add(finding.table);
        if (finding.access !== 'read') writes.add(finding.table);
        break;
      case 'cte':
        break;
      case 'dynamic-table':
        unresolved.push({ kind: 'dynamic-table', call: finding.call, at });
        break;
      case 'raw-sql':
        unresolved.push({ kind: 'raw-sql', at });
        break;
      case 'helper-call':
        unresolved.push({ kind: 'helper-call', callee: finding.callee, source: finding.source, at });
        break;
      case 'parse-error':
        unresolved.push({ kind: 'parse-error', message: finding.message, at });
        break;
      default:
        finding satisfies never;
    }
  }
  const lists = { reads: [...reads].sort(), writes: [...writes].sort() };
  return unresolved.length === 0 ? { kind: 'complete', ...lists } : { kind: 'partial', ...lists, unresolved };
}

/** One line saying what an unresolved item is and why it matters. */
export function describeUnresolved(item: Unresolved): string {
  switch (item.kind) {
    case 'dynamic-table':
      return `${item.call}(…) is given a table name that is not a string literal, so the tables it touches are unknown.`;
    case 'raw-sql':
      return 'raw SQL is executed here; the tables it touches are unknown.';
    case 'helper-call':
      return `${item.callee} (imported from '${item.source}') is handed the database; tables it touches in that file are not analysed.`;
    case 'parse-error':
      return `the file could not be parsed for analysis: ${item.message}`;
  }
}
