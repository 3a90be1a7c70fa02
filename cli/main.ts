import { type CommandDef, defineCommand, renderUsage, runCommand } from 'citty';
import { fwVersion } from '../runtime/version.ts';
import { log, printFailure, printJson } from './output.ts';

/** Commands are data; each loads its implementation only when it runs. */
const subCommands = {
  dev: () => import('./commands/dev.ts').then((m) => m.default),
  create: () => import('./commands/create.ts').then((m) => m.default),
  db: () => import('./commands/db.ts').then((m) => m.default),
};

export const root = defineCommand({
  meta: { name: 'fw', version: fwVersion, description: 'fw — typed full-stack TypeScript apps on PostgreSQL' },
  args: {
    version: { type: 'boolean', description: 'Print the version (with --json as JSON)' },
    json: { type: 'boolean', description: 'Machine-readable output' },
  },
  subCommands,
});

async function resolveCommand(rawArgs: string[]): Promise<[CommandDef<any>, CommandDef<any> | undefined]> {
  let cmd: CommandDef<any> = root;
  let parent: CommandDef<any> | undefined;
  for (const arg of rawArgs) {
    if (arg.startsWith('-')) break;
    const subs = (typeof cmd.subCommands === 'function' ? await cmd.subCommands() : await cmd.subCommands) as Record<string, any> | undefined;
    const next = subs?.[arg];
    if (!next) break;
    parent = cmd;
    cmd = typeof next === 'function' ? await next() : await next;
  }
  return [cmd, parent];
}

/** Runs the CLI and returns its exit code; only the bin calls process.exit. */
export async function main(rawArgs: string[]): Promise<number> {
  const json = rawArgs.includes('--json');
  if (rawArgs.includes('--version') || rawArgs.includes('-v')) {
    if (json) printJson({ ok: true, name: 'fw', version: fwVersion, node: process.versions.node });
    else process.stdout.write(`${fwVersion}\n`);
    return 0;
  }
  if (rawArgs.includes('--help') || rawArgs.includes('-h') || rawArgs.length === 0) {
    const [cmd, parent] = await resolveCommand(rawArgs.filter((a) => a !== '--help' && a !== '-h'));
    process.stdout.write(`${await renderUsage(cmd, parent)}\n`);
    return 0;
  }
  try {
    await runCommand(root, { rawArgs });
    return 0;
  } catch (error) {
    const unknown = (error as { code?: string }).code;
    if (unknown === 'E_UNKNOWN_COMMAND' || unknown === 'E_NO_COMMAND') {
      printFailure(Object.assign(new Error(`${(error as Error).message}. Run fw --help for the list of commands.`)), json);
      return 2;
    }
    if (!json) log('');
    printFailure(error, json);
    return 1;
  }
}
