import path from 'node:path';
import type { AppModel, EntryModel, ExternalEntryModel, ExternalServiceModel } from '../analyse/app-model.ts';
import { argsType, jsonSchemaType, propertyKey } from './json-schema-type.ts';
import { generatedDir } from './render.ts';

const sections = [
  { key: 'commands', kind: 'command' },
  { key: 'queries', kind: 'query' },
  { key: 'liveQueries', kind: 'liveQuery' },
] as const;

const externalSections = [
  { key: 'commands', kind: 'command' },
  { key: 'queries', kind: 'query' },
] as const;

// Words that cannot name an import binding in a module, and the names the module itself declares.
const unusable = new Set(
  ('api Api EntryRef ExternalRef arguments await break case catch class const continue debugger default delete do else enum eval export extends ' +
    'false finally for function if implements import in instanceof interface let new null package private protected public return ' +
    'static super switch this throw true try typeof var void while with yield').split(' '),
);

/**
 * The body of `src/fw/_generated/api.ts`, the typed client module of `client/api-types.ts`: a type-only
 * import of each command, query and liveQuery file, and the `api` object of EntryRefs with the tables
 * each reads and writes, then the ExternalRefs of the external services, typed by their manifests'
 * argsSchema.
 *
 * @example
 *   buildApiModule(model)
 *   // import type { EntryRef, ExternalRef } from 'fwjs/client';
 *   // import type createNote from '../../commands/createNote.ts';
 *   // export const api = {
 *   //   commands: { createNote: { kind: 'command', name: 'createNote', reads: [], writes: ['notes'] } as EntryRef<'command', typeof createNote>, }, …
 *   //   external: { tickets: { commands: { createTicket: { kind: 'command', service: 'tickets', name: 'createTicket', qualifiedName: 'tickets.createTicket' } as ExternalRef<'command', { subject: string }, unknown>, }, queries: {}, }, },
 *   // } as const;
 */
export function buildApiModule(model: AppModel): string {
  const callable = model.entries.filter((e) => sections.some((s) => s.kind === e.kind));
  const hasExternal = model.external.some((service) => service.entries.length > 0);
  const lines = [`import type { EntryRef${hasExternal ? ', ExternalRef' : ''} } from 'fwjs/client';`];
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
  lines.push(...externalSection(model.external));
  lines.push('} as const;', '', 'export type Api = typeof api;', '', ...registerSection(model), '');
  return lines.join('\n');
}

/**
 * The names TypeScript checks in the backend (runtime/core/entry-types.ts, `Register`): the app's
 * policies, its workflows, each event an action or workflow handles with the payload its args
 * accept (what every handler of the event accepts, when several do), and the commands and actions
 * `ctx.scheduler` may call with their args. Plain literal types, not
 * `typeof import(…)` of the handlers: an entry's own type must not depend on itself through here.
 */
function registerSection(model: AppModel): string[] {
  const union = (names: readonly string[]) => (names.length === 0 ? 'never' : names.map(quote).join(' | '));
  const events = new Map<string, string[]>();
  for (const entry of model.entries) {
    if (entry.on === null || (entry.kind !== 'action' && entry.kind !== 'workflow')) continue;
    events.set(entry.on, [...(events.get(entry.on) ?? []), entry.args.kind === 'json-schema' ? jsonSchemaType(entry.args.schema) : 'unknown']);
  }
  const workflows = model.entries.filter((e) => e.kind === 'workflow').map((e) => e.name);
  const calls = model.entries.filter((e) => e.kind === 'command' || e.kind === 'action').sort((a, b) => (a.name < b.name ? -1 : 1));
  return [
    "declare module 'fwjs' {",
    '  interface Register {',
    `    policies: ${union(model.policies)};`,
    `    workflows: ${union(workflows)};`,
    ...(events.size === 0
      ? ['    events: {};']
      : [
        '    events: {',
        ...[...events.keys()].sort().map((name) => `      ${propertyKey(name)}: ${[...new Set(events.get(name))].join(' & ')};`),
        '    };',
      ]),
    ...(calls.length === 0
      ? ['    calls: {};']
      : ['    calls: {', ...calls.map((entry) => `      ${propertyKey(entry.name)}: ${entry.args.kind === 'json-schema' ? jsonSchemaType(entry.args.schema) : 'unknown'};`), '    };']),
    '  }',
    '}',
  ];
}

function entryRef(entry: EntryModel): string {
  const list = (tables: string[]) => `[${tables.map((t) => quote(t)).join(', ')}]`;
  const value = `{ kind: ${quote(entry.kind)}, name: ${quote(entry.name)}, reads: ${list(entry.access.reads)}, writes: ${list(entry.access.writes)} }`;
  return `${value} as EntryRef<${quote(entry.kind)}, typeof ${binding(entry.name)}>`;
}

/** `external: { <service>: { commands: {…}, queries: {…} } }`, one line `external: {},` without services. */
function externalSection(services: readonly ExternalServiceModel[]): string[] {
  if (services.length === 0) return ['  external: {},'];
  const lines = ['  external: {'];
  for (const service of services) {
    lines.push(`    ${propertyKey(service.name)}: {`);
    for (const { key, kind } of externalSections) {
      const members = service.entries.filter((e) => e.kind === kind);
      if (members.length === 0) {
        lines.push(`      ${key}: {},`);
        continue;
      }
      lines.push(`      ${key}: {`);
      for (const entry of members) lines.push(`        ${propertyKey(entry.name)}: ${externalRef(entry)},`);
      lines.push('      },');
    }
    lines.push('    },');
  }
  lines.push('  },');
  return lines;
}

function externalRef(entry: ExternalEntryModel): string {
  const value = `{ kind: ${quote(entry.kind)}, service: ${quote(entry.service)}, name: ${quote(entry.name)}, qualifiedName: ${quote(entry.qualifiedName)} }`;
  // Without a resultSchema the manifest describes no result: callers get unknown and narrow it themselves.
  return `${value} as ExternalRef<${quote(entry.kind)}, ${argsType(entry.args)}, ${entry.result === null ? 'unknown' : jsonSchemaType(entry.result)}>`;
}

/** The import binding of an entry: its name, or `_name` when the name is a reserved word. */
function binding(name: string): string {
  return unusable.has(name) ? `_${name}` : name;
}

function quote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
