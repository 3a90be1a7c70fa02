import { closestName } from '../../../runtime/core/closest-name.ts';
import { builtinModules } from 'node:module';
import { aiRunExports } from '../agent-calls.ts';
import { type CheckDiagnostic, checkDiagnostic } from '../check-diagnostic.ts';
import type { FileFacts } from './facts.ts';
import type { FrontendGraph, GraphEntry } from './graph.ts';
import { fileRole, fileSetOf, importSpecifier, resolveImportCached } from './layout.ts';

const connectUi = 'fw do connect-ui';
const builtins = new Set(builtinModules);
const serverPackages = ['pg', '@electric-sql/pglite', 'kysely'];

/**
 * The frontend contract checks (codes documented in README.md, "Frontend checks"), from the graph and
 * the facts it was built from. Unsorted; the caller sorts.
 */
export function frontendDiagnostics(graph: FrontendGraph, facts: readonly FileFacts[], entries: readonly GraphEntry[]): CheckDiagnostic[] {
  if (graph.layout === 'none') return [];
  const found: CheckDiagnostic[] = [];
  const bridge = graph.bridge.file;
  const bridgeName = bridge ?? graph.bridge.expected[0]!;
  const fileSet = fileSetOf(facts);

  for (const f of facts) {
    const role = fileRole(f.file, bridge);
    const frontendCode = role !== 'server' && role !== 'config';
    for (const error of f.errors) {
      found.push(checkDiagnostic({
        code: 'parse_error', severity: 'error', message: `Cannot parse ${f.file}: ${error.message}`, file: f.file, ...error.at,
        hint: 'Fix the syntax error; fw analyses the file again when it is saved.', suggestedCommand: 'fw check',
      }));
    }
    for (const statement of f.imports) {
      if (role !== 'bridge' && /(?:^|\/)_generated\//.test(statement.source)) {
        found.push(checkDiagnostic({
          code: 'deep_generated_import', severity: 'error', file: f.file, ...statement.at,
          message: `${f.file} imports "${statement.source}" directly; only the bridge (${bridgeName}) may import from _generated/.`,
          hint: `Import the hooks and api from the bridge instead, e.g. import { useCommand } from '${importSpecifier(f.file, bridgeName, true)}'.`,
          suggestedCommand: connectUi,
        }));
      }
      if (!frontendCode || statement.typeOnly) continue;
      const why = serverOnly(f.file, statement, fileSet);
      if (why !== undefined) {
        found.push(checkDiagnostic({
          code: 'server_import_in_frontend', severity: 'error', file: f.file, ...statement.at,
          message: `${f.file} imports "${statement.source}" (${why}), which is server-only and must not reach the browser bundle.`,
          hint: 'Call a command or query through the bridge hooks instead; use `import type` if only its types are needed.',
          suggestedCommand: 'fw inspect client --json',
        }));
      }
      if (statement.source === 'ai') {
        for (const name of statement.names) {
          if (!aiRunExports.has(name.imported)) continue;
          found.push(agentInFrontend(f.file, statement.at, `imports ${name.imported} from "ai"`));
        }
      }
    }
    if (!frontendCode) continue;
    for (const run of f.agentRuns) {
      // Calls of names imported from "ai" are reported once, at their import.
      if (run.call.includes('.')) found.push(agentInFrontend(f.file, run.at, `calls ${run.call}`));
    }
    if (role === 'bridge') continue;
    for (const fetch of f.fetches) {
      found.push(checkDiagnostic({
        code: 'raw_runtime_fetch', severity: 'error', file: f.file, ...fetch.at,
        message: `${f.file} calls the runtime directly (${fetch.api} "${fetch.url}"), bypassing the generated client, the capability map and auth headers.`,
        hint: `Use ${hookFor(fetch.url)} from the bridge (${bridgeName}).`,
        suggestedCommand: connectUi,
      }));
    }
  }

  if (bridge === null) {
    found.push(checkDiagnostic({
      code: 'missing_bridge', severity: 'error', file: bridgeName, line: 1, column: 1,
      message: `The ${graph.layout} web app has no bridge file (${graph.bridge.expected.join(' or ')}).`,
      hint: `Create ${bridgeName} exporting the hooks bound to the generated api; components import them from there.`,
      suggestedCommand: connectUi,
    }));
  }
  if (graph.providers.length === 0) {
    const where = graph.layout === 'nuxt' ? 'web/plugins/fw.client.ts' : (graph.routes.find((r) => r.source === 'root')?.file ?? bridgeName);
    found.push(checkDiagnostic({
      code: 'missing_provider', severity: 'error', file: where, line: 1, column: 1,
      message: graph.layout === 'nuxt'
        ? 'No fw plugin: web/plugins/fw.client.ts and web/plugins/fw.server.ts are missing, so composables have no client.'
        : 'No <FwProvider> is mounted, so every hook fails at run time.',
      hint: graph.layout === 'nuxt'
        ? 'Add web/plugins/fw.client.ts and web/plugins/fw.server.ts that install the fw client from runtimeConfig.public.fwUrl.'
        : 'Wrap the app once in <FwProvider apiUrl="" devAuth={…}> (imported from the bridge) in the layout or main file.',
      suggestedCommand: connectUi,
    }));
  }

  const names = entries.map((e) => e.name);
  for (const hook of graph.hooks) {
    if (hook.status !== 'missing_entry' && hook.status !== 'wrong_kind') continue;
    const action = graph.actions.some((a) => a.hook === hook.id) ? 'UI action' : 'hook';
    const message = hook.status === 'missing_entry'
      ? `${hook.hook}('${hook.entry}') names no entry: this ${action} points to nothing the runtime serves.`
      : `${hook.hook}('${hook.entry}') expects a ${hook.expects.join(' or ') || 'different section'}, but ${hook.entry} is a ${hook.entryKind}.`;
    const near = hook.status === 'missing_entry' ? closestName(hook.entry!, names, 2) : undefined;
    found.push(checkDiagnostic({
      code: 'orphan_ui_action', severity: 'error', file: hook.file, line: hook.line, column: hook.column, message,
      hint: near !== undefined
        ? `Did you mean '${near}'? Otherwise create the entry or remove the call.`
        : hook.status === 'wrong_kind' && hook.entryKind !== null && routeSection[hook.entryKind] !== undefined
          ? `Use ${hookFor(`/${routeSection[hook.entryKind]}/${hook.entry}`)}.`
          : 'Name an existing entry of the right kind, or create the entry.',
      suggestedCommand: 'fw inspect client --json',
    }));
  }
  for (const entry of graph.entries) {
    if (entry.hooks.length > 0) continue;
    const model = entries.find((e) => e.name === entry.name)!;
    if (model.policy === 'system') continue;
    found.push(checkDiagnostic({
      code: 'entry_without_ui', severity: 'info', file: model.file, line: 1, column: 1,
      message: `${entry.kind} ${entry.name} is not used by any component (no UI path reaches it).`,
      hint: `Call it from a component through the bridge, e.g. ${hookFor(`/${entry.kind === 'command' ? 'commands' : entry.kind === 'query' ? 'queries' : 'live'}/${entry.name}`)}; ignore this if it is for scripts or agents.`,
      suggestedCommand: connectUi,
    }));
  }
  return found;
}

function agentInFrontend(file: string, at: { line: number; column: number }, what: string): CheckDiagnostic {
  return checkDiagnostic({
    code: 'agent_in_disallowed_context', severity: 'error', file, ...at,
    message: `${file} ${what}: agents and models run only in actions, workflows, endpoints and server-only code, never in the frontend.`,
    hint: 'Run the agent on the server (an action, workflow or endpoint) and call it from the UI, e.g. through POST /ai/agents/chat.',
    suggestedCommand: 'fw ai agents --json',
  });
}

/** Why an import is server-only, or undefined when it is not. */
function serverOnly(from: string, statement: { source: string }, files: ReadonlySet<string>): string | undefined {
  const { source } = statement;
  if (source === 'fwjs') return "fw's define API";
  if (source === 'fwjs/runtime') return "fw's runtime";
  if (source.startsWith('node:') || builtins.has(source)) return 'a Node.js builtin';
  if (serverPackages.some((p) => source === p || source.startsWith(`${p}/`))) return 'a database driver';
  const target = resolveImportCached(from, statement, files);
  if (target !== undefined && target.startsWith('src/') && !target.startsWith('src/fw/_generated/')) return `backend code in ${target}`;
  return undefined;
}

/** `/commands/createNote` → `useCommand('createNote')`. */
/** The runtime route section of the kinds a hook can call. */
const routeSection: Partial<Record<string, 'commands' | 'queries' | 'live'>> = { command: 'commands', query: 'queries', liveQuery: 'live' };

function hookFor(url: string): string {
  const match = /\/(commands|queries|live)\/([A-Za-z0-9_$]+)/.exec(url);
  if (!match) return 'the hooks (useCommand/useQuery/useLiveQuery)';
  const hook = match[1] === 'commands' ? 'useCommand' : match[1] === 'queries' ? 'useQuery' : 'useLiveQuery';
  return `${hook}('${match[2]}'${hook === 'useCommand' ? '' : ', args'})`;
}
