import { defineCommand } from 'citty';
import type { CliIdentity } from '../../toolchain/external/external-call.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { log, printJson } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

export const callArgs = {
  args: { type: 'string', description: 'The args as JSON (default {})', default: '{}' },
  user: { type: 'string', description: 'Dev identity: user id (default fw-cli)' },
  tenant: { type: 'string', description: 'Dev identity: tenant UUID (default 00000000-0000-4000-8000-000000000001)' },
  role: { type: 'string', description: 'Dev identity: role (default member)' },
  root: { type: 'string', description: 'The app directory', default: '.' },
  json: { type: 'boolean', description: 'Print one JSON document' },
} as const;

/** Calls `<service>.<entry>` of an external service and prints the result. */
export async function runExternal(kind: 'command' | 'query', qualifiedName: string, args: { args: string; user?: string; tenant?: string; role?: string; root: string; json?: boolean }) {
  const { callExternalFromCli, defaultCliIdentity } = await import('../../toolchain/external/external-call.ts');
  let parsed: unknown;
  try {
    parsed = JSON.parse(args.args);
  } catch (error) {
    throw new FwFailure('bad_json', `--args is not JSON: ${(error as Error).message}`, { suggestions: [`fw ${kind === 'command' ? 'run' : 'query'} ${qualifiedName} --args '{"key":"value"}'`] });
  }
  const identity: CliIdentity = { userId: args.user ?? defaultCliIdentity.userId, tenantId: args.tenant ?? defaultCliIdentity.tenantId, role: args.role ?? defaultCliIdentity.role };
  const result = await callExternalFromCli({ root: args.root, qualifiedName, kind, args: parsed, identity });
  if (args.json) printJson({ ok: true, ...result });
  else log(JSON.stringify(result.result, null, 2));
}


// `fw run <service.command>` runs a command; `fw run query <service.query>` a query. citty would take
// `query` for a subcommand name only, so the command itself looks at its first word.
const run = defineCommand({
  meta: commandMeta('run'),
  args: { name: { type: 'positional', description: '<service>.<command>, or "query"', required: true }, target: { type: 'positional', description: 'With "query": <service>.<query>', required: false }, ...callArgs },
  run: ({ args }) => (args.name === 'query' ? runExternal('query', String(args.target ?? ''), args) : runExternal('command', args.name, args)),
});


export default run;
