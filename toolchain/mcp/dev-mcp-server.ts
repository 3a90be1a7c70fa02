/**
 * `fw mcp serve`: fw's contract for coding agents as an MCP server on stdio, in development
 * (docs/mcp.md#for-coding-agents-fw-mcp-serve). The tools are what the CLI answers with `--json`:
 *
 * - `fw_inspect`: the app model (`fw inspect <target> --json`);
 * - `fw_check`: the diagnostics (`fw check --json`);
 * - `fw_db_status`: applied, pending and blocked migrations (`fw db status --json`);
 * - `fw_run_entry`: runs a query or liveQuery once — a command only when the developer started the
 *   server with `--allow-writes` — through the running `fw dev`, as the identity the agent names (dev
 *   headers, as the dashboard's "act as"), so it meets the app's policies and row-level security.
 *
 * Read-only unless the developer allows more: the agent cannot turn writes on, the flag is the
 * developer's. Nothing here is for production: dev headers pick any identity.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import { FwError, toFwError } from '../../runtime/core/errors.ts';
import { fwVersion } from '../../runtime/core/version.ts';
import { runChecks } from '../check/check.ts';
import { readDbStatus } from '../db/db-status.ts';
import { inspectApp, type ClientSurface, type InspectTarget } from '../inspect/inspect.ts';
import { resolveRuntimeUrl } from '../admin/admin-client.ts';

export interface DevMcpOptions {
  /** The app directory. */
  root: string;
  /** The developer's choice: `fw_run_entry` may run commands (writes). */
  allowWrites: boolean;
  /** The running runtime (default: the fw dev of `root`, from .fw/runtime.json). */
  url?: string;
}

const inspectTargets: InspectTarget[] = ['client', 'frontend', 'capabilities', 'agent-tools', 'crons'];

function tools(options: DevMcpOptions): Tool[] {
  const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
  return [
    {
      name: 'fw_inspect',
      description: 'The app model fw knows (fw inspect): client (every entry with kind, route, args and policy), frontend, capabilities, agent-tools or crons.',
      inputSchema: { type: 'object', properties: { target: { type: 'string', enum: inspectTargets, default: 'client' } } },
      annotations: readOnly,
    },
    {
      name: 'fw_check',
      description: 'Runs every static check of the app without changing it (fw check): generated files, entries, frontend contract, boundaries, policies, and its types unless typecheck is false. Diagnostics carry a code, a place and a fix.',
      inputSchema: { type: 'object', properties: { typecheck: { type: 'boolean', default: true } } },
      annotations: readOnly,
    },
    {
      name: 'fw_db_status',
      description: 'Applied and pending migrations, and schema changes waiting for a decision (fw db status).',
      inputSchema: { type: 'object', properties: {} },
      annotations: readOnly,
    },
    {
      name: 'fw_run_entry',
      description: `Runs an entry once through the running fw dev as the identity given (its policies and row-level security apply). ${options.allowWrites ? 'Commands run too (the developer allowed writes).' : 'Queries and liveQueries only: commands are refused (the developer did not allow writes).'}`,
      inputSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'The entry, e.g. listNotes' },
          args: { type: 'object', description: 'Its args' },
          userId: { type: 'string' },
          tenantId: { type: 'string', description: 'A tenant uuid' },
          role: { type: 'string' },
        },
        required: ['name'],
      },
      annotations: { readOnlyHint: !options.allowWrites, destructiveHint: options.allowWrites, idempotentHint: false, openWorldHint: false },
    },
  ];
}

/** The answer of a tool: its JSON, as text and as structured content. */
function answer(value: object): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value as Record<string, unknown> };
}

function failure(error: FwError): CallToolResult {
  const told = { code: error.code, ...(error.reason ? { reason: error.reason } : {}), message: error.message, diagnostics: error.diagnostics };
  return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}` }], structuredContent: { ok: false, error: told } };
}

async function runEntry(input: Record<string, unknown>, options: DevMcpOptions): Promise<object> {
  const name = typeof input.name === 'string' ? input.name : '';
  const surface = (await inspectApp({ root: options.root, target: 'client' })) as ClientSurface;
  const entry = surface.entries.find((candidate) => candidate.name === name);
  if (!entry) {
    throw new FwError('not_found', `No entry named "${name.slice(0, 200)}".`, {
      diagnostics: [{ path: 'name', code: 'unknown_entry', message: `Known: ${surface.entries.map((e) => e.name).join(', ') || '(none)'}` }],
    });
  }
  if (entry.kind === 'command' && !options.allowWrites) {
    throw new FwError('forbidden', `${name} is a command, and this server is read-only.`, {
      reason: 'writes_not_allowed',
      diagnostics: [{ path: 'name', code: 'writes_not_allowed', message: 'The developer allows commands by starting it with `fw mcp serve --allow-writes`; an agent cannot.' }],
    });
  }
  // `POST /queries/listNotes`: a liveQuery runs once by its one-shot read.
  const [method, routePath] = (entry.kind === 'liveQuery' ? entry.onceRoute : entry.route)?.split(' ') ?? [];
  if (!method || !routePath) throw new FwError('not_found', `${name} has no HTTP route to run it by.`);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const [header, key] of [['x-fw-user-id', 'userId'], ['x-fw-tenant-id', 'tenantId'], ['x-fw-role', 'role']] as const) {
    if (typeof input[key] === 'string') headers[header] = input[key] as string;
  }
  const base = resolveRuntimeUrl({ root: options.root, ...(options.url ? { url: options.url } : {}) });
  let response: Response;
  try {
    response = await fetch(`${base}${routePath}`, { method, headers, body: JSON.stringify({ args: input.args ?? {} }) });
  } catch {
    throw new FwError('unavailable', `No fw runtime answers at ${base}: start fw dev in ${options.root}.`, { diagnostics: [{ path: 'runtime', code: 'runtime_unreachable', message: 'fw_run_entry runs entries through the running fw dev.' }] });
  }
  // fw's own answer, as HTTP gives it: { ok, result } or { ok: false, error } with its code and diagnostics.
  return (await response.json()) as object;
}

async function call(name: string, input: Record<string, unknown>, options: DevMcpOptions): Promise<CallToolResult> {
  try {
    switch (name) {
      case 'fw_inspect': {
        const target = (input.target ?? 'client') as InspectTarget;
        if (!inspectTargets.includes(target)) throw new FwError('validation_failed', `target must be one of ${inspectTargets.join(', ')}.`, { diagnostics: [{ path: 'target', code: 'invalid_target', message: inspectTargets.join(', ') }] });
        return answer(await inspectApp({ root: options.root, target }));
      }
      case 'fw_check':
        return answer(await runChecks({ root: options.root, typecheck: input.typecheck !== false }));
      case 'fw_db_status':
        return answer(await readDbStatus(options.root));
      case 'fw_run_entry':
        return answer(await runEntry(input, options));
      default:
        throw new FwError('not_found', `Unknown tool: ${name.slice(0, 200)}`);
    }
  } catch (thrown) {
    return failure(toFwError(thrown));
  }
}

/** Serves the tools on stdin/stdout until the client closes them; resolves when it has. */
export async function serveDevMcp(options: DevMcpOptions): Promise<void> {
  const [{ Server }, { StdioServerTransport }] = await Promise.all([import('@modelcontextprotocol/server'), import('@modelcontextprotocol/server/stdio')]);
  const server = new Server({ name: 'fw-dev', version: fwVersion }, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler('tools/list', async () => ({ tools: tools(options) }));
  server.setRequestHandler('tools/call', async (request) => call(request.params.name, request.params.arguments ?? {}, options));
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  await server.connect(new StdioServerTransport());
  await closed;
}
