import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseSync } from 'oxc-parser';
import type { EntryKind } from '../../runtime/entries.ts';
import { type AppDefinition, entryRoutes } from '../../runtime/registry.ts';
import type { Table } from '../../runtime/schema.ts';
import { agentTools, appTools } from '../../runtime/ai/catalog.ts';
import { DEFAULT_MAX_STEPS, type ToolRisk } from '../../runtime/ai/define.ts';
import { listAiFiles, listEntryFiles } from '../load-app.ts';
import { entryAgentRuns } from './agent-calls.ts';
import { type ArgsSchema, argsJsonSchema } from '../../runtime/args-schema.ts';
import type { CheckDiagnostic } from './check-diagnostic.ts';
import { describeUnresolved, type EntryAccess, summarizeAccess, type Unresolved } from './entry-access.ts';
import { findTableAccess, type TableAccessFinding } from './table-access.ts';

/** Something generation noticed: `path` is `file` or `file:line:column`, relative to the app root. */
export interface GenerateDiagnostic {
  severity: 'warning' | 'info';
  code: 'dynamic_table' | 'raw_sql' | 'helper_call' | 'parse_error' | 'unknown_table' | 'query_writes' | 'args_schema_unavailable';
  path: string;
  message: string;
}

/** One entry with everything the artifacts say about it. */
export interface EntryModel {
  name: string;
  kind: EntryKind;
  /** Its source file relative to the app root, e.g. `src/commands/createNote.ts`. */
  file: string;
  /** `POST /commands/createNote`, or null for kinds not served over HTTP yet. */
  route: string | null;
  policy: string;
  description: string | null;
  args: ArgsSchema;
  access: EntryAccess;
  /** Whether it touches a tenant-scoped table; `unknown` when the analysis is partial and saw none. */
  tenantScoped: boolean | 'unknown';
}

/** A tool agents can call (agentTools.json): an entry's auto-tool or an aiTool. */
export interface ToolModel {
  name: string;
  source: 'entry' | 'aiTool';
  kind: 'command' | 'query' | 'liveQuery' | 'aiTool';
  /** The entry behind an auto-tool; null for aiTools. */
  entry: string | null;
  file: string;
  description: string;
  risk: ToolRisk;
  needsApproval: boolean;
  /** Runs in a read-only transaction. */
  readOnly: boolean;
  policy: string;
  /** Tables it reads and writes (for an aiTool, from its handler's source). */
  reads: string[];
  writes: string[];
  analysis: 'complete' | 'partial';
  /** The environment variables an aiTool declares; none for auto-tools. */
  secrets: string[];
  inputSchema: Record<string, unknown> | null;
  /** How it runs: through fw's runtime (external services' tools arrive with the external protocol). */
  execution: 'fw-runtime-endpoint';
}

/** An agent as the artifacts describe it. */
export interface AgentModel {
  name: string;
  file: string;
  provider: 'gateway' | 'mock';
  model: string;
  /** The step limit that applies: its own, or the default when it declares none. */
  maxSteps: number;
  maxStepsDeclared: boolean;
  tools: string[];
}

/** The analysed app every artifact is built from: entries and tables sorted by name. */
export interface AppModel {
  entries: EntryModel[];
  /** Every tool agents can call, auto-tools then aiTools, each sorted by name. */
  tools: ToolModel[];
  agents: AgentModel[];
  tables: Array<{ name: string; table: Table }>;
  /** Names of the app's own policies (`src/policies.ts`), sorted. */
  policies: string[];
  diagnostics: GenerateDiagnostic[];
  /** Agent or model runs in commands, queries and liveQueries (spec Errors 4): `agent_in_disallowed_context` errors. */
  agentRuns: CheckDiagnostic[];
}

/**
 * Analyses a loaded app: reads each entry's source file for its table access and converts its args to
 * JSON Schema.
 *
 * @example
 *   const model = await analyseApp(root, await loader.load());
 *   model.entries.find((e) => e.name === 'createNote')?.access // { kind: 'complete', reads: [], writes: ['notes'] }
 */
export function analyseApp(root: string, app: AppDefinition): Promise<AppModel> {
  // A loaded app never changes (a reload makes a new one), so its model is computed once: a web/ edit
  // re-generates without reading or parsing the backend again.
  let model = models.get(app);
  if (model === undefined) {
    model = analyse(root, app);
    models.set(app, model);
    model.catch(() => models.delete(app));
  }
  return model;
}

const models = new WeakMap<AppDefinition, Promise<AppModel>>();

async function analyse(root: string, app: AppDefinition): Promise<AppModel> {
  const files = await listEntryFiles(root);
  const tables = app.schema.tables;
  const names = [...app.entries.keys()].sort();

  const analysed = await Promise.all(
    names.map(async (name): Promise<{ model: EntryModel; diagnostics: GenerateDiagnostic[]; agentRuns: CheckDiagnostic[] }> => {
      const entry = app.entries.get(name)!;
      const file = files.find((f) => f.name === name && f.kinds.includes(entry.kind))?.file;
      if (file === undefined) {
        throw new Error(`fw: ${entry.kind} "${name}" has no source file in ${root} any more; load the app again before generating.`);
      }
      const source = await readFile(path.join(root, file), 'utf8');
      // One parse per file serves both analyses.
      const parsed = parseSync(file, source);
      const findings = findTableAccess(file, source, parsed);
      const access = summarizeAccess(file, findings);
      const args = argsJsonSchema(entry.args);
      const route = entryRoutes[entry.kind];
      const model: EntryModel = {
        name,
        kind: entry.kind,
        file,
        route: route === undefined ? null : `${route}${name}`,
        policy: entry.policy,
        description: entry.description ?? null,
        args,
        access,
        tenantScoped: tenantScope(access, tables),
      };
      return { model, diagnostics: entryDiagnostics(model, findings, tables), agentRuns: entryAgentRuns(model, source, parsed) };
    }),
  );

  const entryModels = analysed.map((a) => a.model);
  const { tools, agents } = await analyseAi(root, app, entryModels);
  return {
    entries: entryModels,
    tools,
    agents,
    tables: Object.keys(tables).sort().map((name) => ({ name, table: tables[name]! })),
    policies: Object.keys(app.policies).sort(),
    // In entry-name order, and within an entry in source order.
    diagnostics: analysed.flatMap((a) => a.diagnostics),
    agentRuns: analysed.flatMap((a) => a.agentRuns),
  };
}

/** The tools and agents: auto-tools take their table access from their entry, aiTools from their own file. */
async function analyseAi(root: string, app: AppDefinition, entries: readonly EntryModel[]): Promise<{ tools: ToolModel[]; agents: AgentModel[] }> {
  const aiFiles = await listAiFiles(root);
  const fileOf = (kind: 'agent' | 'aiTool', name: string) => aiFiles.find((f) => f.kind === kind && f.name === name)?.file ?? '';
  const tools = await Promise.all(
    appTools(app).map(async (t): Promise<ToolModel> => {
      const schema = argsJsonSchema(t.inputSchema);
      let where: Pick<ToolModel, 'file' | 'reads' | 'writes' | 'analysis'>;
      if (t.source === 'entry') {
        const entry = entries.find((e) => e.name === t.name)!;
        where = { file: entry.file, reads: entry.access.reads, writes: entry.access.writes, analysis: entry.access.kind };
      } else {
        const file = fileOf('aiTool', t.name);
        const source = await readFile(path.join(root, file), 'utf8');
        const access = summarizeAccess(file, findTableAccess(file, source, parseSync(file, source)));
        where = { file, reads: access.reads, writes: access.writes, analysis: access.kind };
      }
      // Built in the interface's order: agentTools.json keeps it.
      return {
        name: t.name,
        source: t.source,
        kind: t.kind,
        entry: t.source === 'entry' ? t.name : null,
        file: where.file,
        description: t.description,
        risk: t.risk,
        needsApproval: t.needsApproval,
        readOnly: t.readOnly,
        policy: t.policy,
        reads: where.reads,
        writes: where.writes,
        analysis: where.analysis,
        secrets: t.source === 'aiTool' ? [...t.tool.secrets].sort() : [],
        inputSchema: schema.kind === 'json-schema' ? schema.schema : null,
        execution: 'fw-runtime-endpoint',
      };
    }),
  );
  const agents = [...(app.agents ?? [])]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, agent]): AgentModel => ({
      name,
      file: fileOf('agent', name),
      provider: agent.provider,
      model: agent.model,
      maxSteps: agent.maxSteps ?? DEFAULT_MAX_STEPS,
      maxStepsDeclared: agent.maxSteps !== undefined,
      tools: agentTools(app, agent).map((t) => t.name),
    }));
  return { tools, agents };
}

const unresolvedCodes = {
  'dynamic-table': 'dynamic_table',
  'raw-sql': 'raw_sql',
  'helper-call': 'helper_call',
  'parse-error': 'parse_error',
} as const satisfies Record<Unresolved['kind'], GenerateDiagnostic['code']>;

function tenantScope(access: EntryAccess, tables: Record<string, Table>): boolean | 'unknown' {
  const touched = [...access.reads, ...access.writes];
  if (touched.some((name) => tables[name]?.tenantScoped === true)) return true;
  return access.kind === 'partial' || touched.some((name) => tables[name] === undefined) ? 'unknown' : false;
}

function entryDiagnostics(entry: EntryModel, findings: TableAccessFinding[], tables: Record<string, Table>): GenerateDiagnostic[] {
  const found: GenerateDiagnostic[] = [];
  const where = (table: string, write = false) => {
    const hit = findings.find((f) => f.kind === 'table' && f.table === table && (!write || f.access !== 'read'));
    return hit ? `${entry.file}:${hit.at.line}:${hit.at.column}` : entry.file;
  };
  if (entry.access.kind === 'partial') {
    for (const item of entry.access.unresolved) {
      found.push({
        severity: 'warning',
        code: unresolvedCodes[item.kind],
        path: item.at,
        message: `${entry.kind} ${entry.name}: ${describeUnresolved(item)} capabilityMap.json marks it partial.`,
      });
    }
  }
  for (const table of new Set([...entry.access.reads, ...entry.access.writes])) {
    if (tables[table] !== undefined) continue;
    found.push({
      severity: 'warning',
      code: 'unknown_table',
      path: where(table),
      message: `${entry.kind} ${entry.name} uses table "${table}", which src/fw/schema.ts does not declare.`,
    });
  }
  if ((entry.kind === 'query' || entry.kind === 'liveQuery') && entry.access.writes.length > 0) {
    const table = entry.access.writes[0]!;
    found.push({
      severity: 'warning',
      code: 'query_writes',
      path: where(table, true),
      message: `${entry.kind} ${entry.name} writes ${entry.access.writes.join(', ')}, but queries run read-only and the database will refuse it. Make it a command.`,
    });
  }
  if (entry.args.kind === 'unavailable') {
    found.push({ severity: entry.args.severity, code: 'args_schema_unavailable', path: entry.file, message: `${entry.kind} ${entry.name}: ${entry.args.reason}` });
  }
  return found;
}
