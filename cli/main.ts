import { type CommandDef, defineCommand, renderUsage, runCommand } from 'citty';
import { fwVersion } from '../runtime/version.ts';
import { FwFailure } from '../runtime/failure.ts';
import { log, printFailure, printJson } from './output.ts';

/** Commands are data; each loads its implementation only when it runs. */
const subCommands = {
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
  build: () => import('./commands/build.ts').then((m) => m.default),
  start: () => import('./commands/start.ts').then((m) => m.default),
};

export const root = defineCommand({
  meta: { name: 'fw', version: fwVersion, description: 'fw — typed full-stack TypeScript apps on PostgreSQL' },
  args: {
    version: { type: 'boolean', description: 'Print the version (with --json as JSON)' },
    json: { type: 'boolean', description: 'Machine-readable output' },
  },
  subCommands,
});

/** Walks the subcommand names at the start of `rawArgs`: the command they name, its parent, and the rest. */
async function resolveCommand(rawArgs: string[]): Promise<{ cmd: CommandDef<any>; parent?: CommandDef<any>; rest: string[]; unknown?: string }> {
  let cmd: CommandDef<any> = root;
  let parent: CommandDef<any> | undefined;
  let index = 0;
  for (; index < rawArgs.length; index++) {
    const arg = rawArgs[index]!;
    if (arg.startsWith('-')) break;
    const subs = (typeof cmd.subCommands === 'function' ? await cmd.subCommands() : await cmd.subCommands) as Record<string, any> | undefined;
    if (!subs) break;
    const next = subs[arg];
    if (!next) return { cmd, rest: rawArgs.slice(index), unknown: arg, ...(parent ? { parent } : {}) };
    parent = cmd;
    cmd = typeof next === 'function' ? await next() : await next;
  }
  return { cmd, rest: rawArgs.slice(index), ...(parent ? { parent } : {}) };
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
    process.stdout.write(`${await renderUsage(resolved.cmd, resolved.parent)}\n`);
    return 0;
  }
  if (!resolved.unknown && !resolved.cmd.run) {
    const name = rawArgs.filter((a) => !a.startsWith('-')).join(' ');
    if (json) printFailure(new FwFailure('missing_command', `fw ${name} needs a subcommand.`, { suggestions: [`fw ${name} --help`] }), true);
    else process.stdout.write(`${await renderUsage(resolved.cmd, resolved.parent)}\n`);
    return 2;
  }
  if (resolved.unknown) {
    printFailure(new FwFailure('unknown_command', `Unknown command "${resolved.unknown}".`, { suggestions: ['fw --help'] }), json);
    return 2;
  }
  try {
    // A command that reports its own outcome (e.g. `dev --once`) returns `{ exitCode }`.
    const { result } = await runCommand(resolved.cmd, { rawArgs: resolved.rest });
    const exitCode = (result as { exitCode?: unknown } | undefined)?.exitCode;
    return typeof exitCode === 'number' ? exitCode : 0;
  } catch (error) {
    if (!json) log('');
    printFailure(error, json);
    return 1;
  }
}
