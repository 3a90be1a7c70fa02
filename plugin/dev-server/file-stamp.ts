import { statSync } from 'node:fs';

/**
 * A file's size and modification time, or `gone`: enough to tell that it changed since. The watchers
 * fw relies on can report a file truncated-then-written as one event seen before the write ends, so
 * what reads a file on an event stamps it before and after, and goes round again when they differ.
 */
export function fileStamp(file: string): string {
  try {
    const stat = statSync(file);
    return `${stat.size}:${stat.mtimeMs}`;
  } catch {
    return 'gone';
  }
}
