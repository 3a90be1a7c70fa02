/**
 * Text edits planned against one original source and applied together, so a repair never reformats
 * what it does not touch and positions found by one parse stay valid for every edit (the model of
 * magic-string, reduced to what connect-ui needs: replace a range, insert at a point).
 */
export interface Edit {
  start: number;
  end: number;
  text: string;
}

/**
 * Applies non-overlapping edits to `source`. Inserts at the same point keep the order they were
 * planned in. Overlapping ranges are a bug in the planner, so they throw.
 *
 * @example
 *   applyEdits('a(b)', [{ start: 0, end: 1, text: 'c' }, { start: 4, end: 4, text: ';' }]) // 'c(b);'
 */
export function applyEdits(source: string, edits: readonly Edit[]): string {
  const ordered = edits.map((edit, index) => ({ edit, index })).sort((a, b) => a.edit.start - b.edit.start || a.edit.end - b.edit.end || a.index - b.index);
  let out = '';
  let cursor = 0;
  for (const { edit } of ordered) {
    if (edit.start < cursor) throw new Error(`fw connect-ui: overlapping edits at ${edit.start} (internal error).`);
    out += source.slice(cursor, edit.start) + edit.text;
    cursor = edit.end;
  }
  return out + source.slice(cursor);
}

/** The whitespace a line starts with, for the line that holds `offset`. */
export function indentAt(source: string, offset: number): string {
  const lineStart = source.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(source.slice(lineStart))![0];
}

/** `name`, or `name2`, `name3`… when `name` already appears as a word in `source`. */
export function freshName(source: string, name: string): string {
  const taken = (candidate: string) => new RegExp(`(?<![\\w$])${candidate.replace(/\$/g, '\\$')}(?![\\w$])`).test(source);
  if (!taken(name)) return name;
  for (let i = 2; ; i++) if (!taken(`${name}${i}`)) return `${name}${i}`;
}
