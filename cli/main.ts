import { type CommandDef, defineCommand, renderUsage, runCommand } from 'citty';
import { fwVersion } from '../runtime/core/version.ts';
import { FwFailure } from '../runtime/core/failure.ts';
import { stripVTControlCharacters } from 'node:util';
import { closestName } from '../runtime/core/closest-name.ts';
import { colourFor } from '../runtime/config/colour.ts';
import { commandMeta, commandNames } from './command-meta.ts';
import { log, printFailure, printJson } from './output.ts';

/** Commands are data; each loads its implementation only when it runs. */
const subCommands: Record<(typeof commandNames)[number], () => Promise<CommandDef<any>>> = {
  dev: () => import('./commands/dev.ts').then((m) => m.default),
  create: () => import('./commands/create.ts').then((m) => m.default),
  db: () => import('./commands/db.ts').then((m) => m.default),
  generate: () => import('./commands/generate.ts').then((m) => m.default),
  live: () => import('./commands/live.ts').then((m) => m.default),
  inspect: () => import('./commands/inspect.ts').then((m) => m.default),
  check: () => import('./commands/check.ts').then((m) => m.default),
  verify: () => import('./commands/verify.ts').then((m) => m.default),
  test: () => import('./commands/test.ts').then((m) => m.default),
  repair: () => import('./commands/repair.ts').then((m) => m.default),
  make: () => import('./commands/make.ts').then((m) => m.default),
  do: () => import('./commands/do.ts').then((m) => m.default),
  ai: () => import('./commands/ai.ts').then((m) => m.default),
  manifest: () => import('./commands/manifest.ts').then((m) => m.default),
  run: () => import('./commands/run.ts').then((m) => m.default),
  query: () => import('./commands/query.ts').then((m) => m.default),
  agent: () => import('./commands/agent.ts').then((m) => m.default),
  worker: () => import('./commands/worker.ts').then((m) => m.default),
  workflows: () => import('./commands/workflows.ts').then((m) => m.default),
  schedule: () => import('./commands/schedule.ts').then((m) => m.default),
  mcp: () => import('./commands/mcp.ts').then((m) => m.default),
  build: () => import('./commands/build.ts').then((m) => m.default),
  start: () => import('./commands/start.ts').then((m) => m.default),
  auth: () => import('./commands/auth.ts').then((m) => m.default),
  config: () => import('./commands/config.ts').then((m) => m.default),
};

export const root = defineCommand({
  meta: { name: 'fw', version: fwVersion, description: 'fw — typed full-stack TypeScript apps on PostgreSQL' },
  args: {
    version: { type: 'boolean', description: 'Print the version (with --json as JSON)' },
    json: { type: 'boolean', description: 'Machine-readable output' },
  },
  subCommands,
});

/**
 * `fw --help`: the root's usage, its commands listed from their names and descriptions alone
 * (command-meta.ts), so printing it loads none of them — as quick as `vite --help`.
 */
function rootUsage(): Promise<string> {
  return renderUsage(defineCommand({ meta: root.meta, args: root.args, subCommands: Object.fromEntries(commandNames.map((name) => [name, { meta: commandMeta(name) }])) }));
}

/** Usage on stdout: citty colours it always; a pipe, a file, NO_COLOR or FORCE_COLOR=0 get plain text. */
function printUsage(usage: string): void {
  process.stdout.write(`${colourFor(process.stdout) ? usage : stripVTControlCharacters(usage)}\n`);
}

/** Walks the subcommand names at the start of `rawArgs`: the command they name, its parent, and the rest. */
async function resolveCommand(
  rawArgs: string[],
): Promise<{ cmd: CommandDef<any>; parent?: CommandDef<any>; path: string[]; rest: string[]; unknown?: { name: string; known: string[] } }> {
  let cmd: CommandDef<any> = root;
  let parent: CommandDef<any> | undefined;
  let index = 0;
  for (; index < rawArgs.length; index++) {
    const arg = rawArgs[index]!;
    if (arg.startsWith('-')) break;
    const subs = (typeof cmd.subCommands === 'function' ? await cmd.subCommands() : await cmd.subCommands) as Record<string, any> | undefined;
    if (!subs) break;
    const next = subs[arg];
    const path = rawArgs.slice(0, index);
    if (!next) return { cmd, path, rest: rawArgs.slice(index), unknown: { name: arg, known: Object.keys(subs) }, ...(parent ? { parent } : {}) };
    parent = cmd;
    cmd = typeof next === 'function' ? await next() : await next;
  }
  return { cmd, path: rawArgs.slice(0, index), rest: rawArgs.slice(index), ...(parent ? { parent } : {}) };
}

/** `fw inspect bogus`: what there is, the nearest name, and where the usage is. */
function unknownCommand(path: string[], unknown: { name: string; known: string[] }): FwFailure {
  const at = ['fw', ...path].join(' ');
  const nearest = closestName(unknown.name, unknown.known, 2);
  return new FwFailure('unknown_command', `Unknown command "${unknown.name}" for ${at}. Commands: ${unknown.known.join(', ')}.`, {
    suggestions: [...(nearest ? [`${at} ${nearest}`] : []), `${at} --help`],
  });
}

/** Runs the CLI and returns its exit code; only the bin calls process.exit. */
export async function main(rawArgs: string[]): Promise<number> {
  const json = rawArgs.includes('--json');
  if (rawArgs.includes('--version') || rawArgs.includes('-v')) {
    if (json) printJson({ ok: true, name: 'fw', version: fwVersion, node: process.versions.node });
    else process.stdout.write(`${fwVersion}\n`);
    return 0;
  }
  const resolved = await resolveCommand(rawArgs.filter((a) => a !== '--help' && a !== '-h'));
  const wantsHelp = rawArgs.includes('--help') || rawArgs.includes('-h') || rawArgs.length === 0;
  if (wantsHelp) {
    printUsage(resolved.cmd === root ? await rootUsage() : await renderUsage(resolved.cmd, resolved.parent));
    return 0;
  }
  if (!resolved.unknown && !resolved.cmd.run) {
    const name = rawArgs.filter((a) => !a.startsWith('-')).join(' ');
    if (json) printFailure(new FwFailure('missing_command', `fw ${name} needs a subcommand.`, { suggestions: [`fw ${name} --help`] }), true);
    else printUsage(await renderUsage(resolved.cmd, resolved.parent));
    return 2;
  }
  if (resolved.unknown) {
    printFailure(unknownCommand(resolved.path, resolved.unknown), json);
    return 2;
  }
  try {
    // A command that reports its own outcome (e.g. `dev --once`) returns `{ exitCode }`.
    const { result } = await runCommand(resolved.cmd, { rawArgs: resolved.rest });
    const exitCode = (result as { exitCode?: unknown } | undefined)?.exitCode;
    return typeof exitCode === 'number' ? exitCode : 0;
  } catch (error) {
    if (!json) log('');
    // citty's own argument errors (a missing positional, a value not in its options) are the caller's.
    if (error instanceof Error && (error as { code?: unknown }).code === 'EARG') {
      const at = ['fw', ...resolved.path].join(' ');
      printFailure(new FwFailure('invalid_arguments', `${at}: ${stripVTControlCharacters(error.message)}`, { suggestions: [`${at} --help`] }), json);
      return 2;
    }
    printFailure(error, json);
    return 1;
  }
}
