import path from 'node:path';
import type { AppModel, EntryModel } from '../analyse/app-model.ts';
import { generatedDir } from './render.ts';

const sections = [
  { key: 'commands', kind: 'command' },
  { key: 'queries', kind: 'query' },
  { key: 'liveQueries', kind: 'liveQuery' },
] as const;

// Words that cannot name an import binding in a module, and the names the module itself declares.
const unusable = new Set(
  ('api Api EntryRef arguments await break case catch class const continue debugger default delete do else enum eval export extends ' +
    'false finally for function if implements import in instanceof interface let new null package private protected public return ' +
    'static super switch this throw true try typeof var void while with yield').split(' '),
);

/**
 * The body of `src/fw/_generated/api.ts`, the typed client module of `client/api-types.ts`: a type-only
 * import of each command, query and liveQuery file, and the `api` object of EntryRefs with the tables
 * each reads and writes.
 *
 * @example
 *   buildApiModule(model)
 *   // import type { EntryRef } from 'fw/client';
 *   // import type createNote from '../../commands/createNote.ts';
 *   // export const api = { commands: { createNote: { kind: 'command', name: 'createNote', reads: [], writes: ['notes'] } as EntryRef<'command', typeof createNote>, }, … } as const;
 */
export function buildApiModule(model: AppModel): string {
  const callable = model.entries.filter((e) => sections.some((s) => s.kind === e.kind));
  const lines = ["import type { EntryRef } from 'fw/client';"];
  for (const entry of callable) {
    lines.push(`import type ${binding(entry.name)} from '${path.posix.relative(generatedDir, entry.file)}';`);
  }
  lines.push('', 'export const api = {');
  for (const { key, kind } of sections) {
    const members = callable.filter((e) => e.kind === kind);
    if (members.length === 0) {
      lines.push(`  ${key}: {},`);
      continue;
    }
    lines.push(`  ${key}: {`);
    for (const entry of members) lines.push(`    ${entry.name}: ${entryRef(entry)},`);
    lines.push('  },');
  }
  lines.push('} as const;', '', 'export type Api = typeof api;', '');
  return lines.join('\n');
}

function entryRef(entry: EntryModel): string {
  const list = (tables: string[]) => `[${tables.map((t) => quote(t)).join(', ')}]`;
  const value = `{ kind: ${quote(entry.kind)}, name: ${quote(entry.name)}, reads: ${list(entry.access.reads)}, writes: ${list(entry.access.writes)} }`;
  return `${value} as EntryRef<${quote(entry.kind)}, typeof ${binding(entry.name)}>`;
}

/** The import binding of an entry: its name, or `_name` when the name is a reserved word. */
function binding(name: string): string {
  return unusable.has(name) ? `_${name}` : name;
}

function quote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
