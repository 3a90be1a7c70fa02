import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseSync } from 'oxc-parser';
import type { EntryKind } from '../../runtime/core/entry-types.ts';
import { type AppDefinition } from '../../runtime/core/app-definition.ts';
import { entryRoute } from '../../runtime/core/entry-routes.ts';
import type { Table } from '../../runtime/core/schema.ts';
import { agentTools, appTools, toolInputJsonSchema } from '../../runtime/ai/catalog.ts';
import { DEFAULT_MAX_STEPS, type ToolRisk } from '../../runtime/core/ai-definitions.ts';
import { invalidatedTables, normalizeEffect } from '../../runtime/external/effects.ts';
import { entryDefaults } from '../../runtime/core/external-manifest.ts';
import { listAiFiles, listEntryFiles } from '../load-app.ts';
import { entryAgentRuns } from './agent-calls.ts';
import { entryWorkflowStarts } from './workflow-starts.ts';
import { entryScheduledCalls } from './scheduled-calls.ts';
import { type ArgsSchema, argsJsonSchema } from '../../runtime/core/args-schema.ts';
import type { CheckDiagnostic, GenerateDiagnostic } from './check-diagnostic.ts';
import { describeUnresolved, type EntryAccess, summarizeAccess, type Unresolved } from './entry-access.ts';
import { findTableAccess, type TableAccessFinding } from './table-access.ts';

export type { GenerateDiagnostic } from './check-diagnostic.ts';

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
  /** The event an action or workflow handles (`on`); null for the other kinds and for none. */
  on: string | null;
  access: EntryAccess;
  /** Whether it touches a tenant-scoped table; `unknown` when the analysis is partial and saw none. */
  tenantScoped: boolean | 'unknown';
}

/** A tool agents can call (agentTools.json): an entry's auto-tool or an aiTool. */
export interface ToolModel {
  name: string;
  source: 'entry' | 'aiTool' | 'external';
  kind: 'command' | 'query' | 'liveQuery' | 'aiTool';
  /** The entry behind an auto-tool (`<service>.<entry>` for external ones); null for aiTools. */
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
  /** How it runs: through fw's runtime, or through its bridge to an external service. */
  execution: 'fw-runtime-endpoint' | 'external-runtime-endpoint';
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

/** One entry of an external service (`<service>.<entry>`), as the artifacts describe it. */
export interface ExternalEntryModel {
  service: string;
  name: string;
  qualifiedName: string;
  kind: 'command' | 'query';
  /** `POST /external/<service>/commands/<name>` (or `/queries/`). */
  route: string;
  policy: string;
  risk: 'read' | 'write' | 'destructive' | 'external';
  transaction: 'external-managed' | 'read-only';
  needsApproval: boolean;
  effects: Array<{ name: string; tables: string[]; liveQueries: string[] }>;
  /** The tables its effects invalidate when it succeeds (`effectTables`: named tables and those of named liveQueries). */
  invalidates: string[];
  tenantScoped: boolean;
  description: string | null;
  args: Record<string, unknown> | null;
  /** The manifest's resultSchema: the result type in the generated client. */
  result: Record<string, unknown> | null;
}

/** An external service with its entries (sorted by kind, then name). */
export interface ExternalServiceModel {
  name: string;
  language: string | null;
  framework: string | null;
  transport: 'http' | 'stdio' | 'grpc';
  baseUrl: string | null;
  health: string | null;
  command: string | null;
  commandArgs: string[];
  /** Where the manifest came from: `fw.manifest.json` or `.fw/external-manifests.json`. */
  source: string;
  entries: ExternalEntryModel[];
}

/** The analysed app every artifact is built from: entries and tables sorted by name. */
/** A cron as the contract records it (api.json): no next run times, which would change with the clock. */
export interface CronModel {
  name: string;
  /** The command or action it calls. */
  call: string;
  /** A cron expression and the time zone it is read in, or null for an interval. */
  cron: string | null;
  timezone: string | null;
  /** An interval (milliseconds or text like '15m'), or null for a cron expression. */
  every: number | string | null;
  /** The tenant it runs in, or null (the system, no tenant). */
  tenant: string | null;
  /** The system query listing the tenants it runs in, each tick (instead of `tenant`), or null. */
  forEachTenant: string | null;
}

export interface AppModel {
  /** External services (the external runtime protocol), sorted by name. */
  external: ExternalServiceModel[];
  entries: EntryModel[];
  /** Every tool agents can call, auto-tools then aiTools, each sorted by name. */
  tools: ToolModel[];
  agents: AgentModel[];
  tables: Array<{ name: string; table: Table }>;
  /** Names of the app's own policies (`src/policies.ts`), sorted. */
  policies: string[];
  /** The crons of `src/crons.ts`, by name: what each calls, when, in which tenant. */
  crons: CronModel[];
  diagnostics: GenerateDiagnostic[];
  /** Agent or model runs in commands, queries and liveQueries (spec Errors 4): `agent_in_disallowed_context` errors. */
  agentRuns: CheckDiagnostic[];
  /** `ctx.startWorkflow('name')` in commands naming no workflow (`unknown_workflow`), `ctx.scheduler.runAfter(…, 'name')` naming no command or action (`unknown_scheduled_call`). */
  workflowStarts: CheckDiagnostic[];
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
  const workflows = names.filter((name) => app.entries.get(name)!.kind === 'workflow');
  const callables = names.filter((name) => ['command', 'action'].includes(app.entries.get(name)!.kind));

  const analysed = await Promise.all(
    names.map(async (name): Promise<{ model: EntryModel; diagnostics: GenerateDiagnostic[]; agentRuns: CheckDiagnostic[]; workflowStarts: CheckDiagnostic[] }> => {
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
      const route = entryRoute(name, entry);
      const model: EntryModel = {
        name,
        kind: entry.kind,
        file,
        route,
        policy: entry.policy,
        description: entry.description ?? null,
        args,
        on: typeof entry.options.on === 'string' ? entry.options.on : null,
        access,
        tenantScoped: tenantScope(access, tables),
      };
      return {
        model,
        diagnostics: entryDiagnostics(model, findings, tables),
        agentRuns: entryAgentRuns(model, source, parsed),
        workflowStarts: [...entryWorkflowStarts(model, source, parsed, workflows), ...entryScheduledCalls(model, source, parsed, callables)],
      };
    }),
  );

  const entryModels = analysed.map((a) => a.model);
  const { tools, agents } = await analyseAi(root, app, entryModels);
  return {
    external: externalModels(app),
    entries: entryModels,
    tools,
    agents,
    tables: Object.keys(tables).sort().map((name) => ({ name, table: tables[name]! })),
    policies: Object.keys(app.policies).sort(),
    crons: [...(app.crons ?? [])]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, c]) => ({ name, call: c.call, cron: c.cron ?? null, timezone: c.cron === undefined ? null : (c.timezone ?? 'UTC'), every: c.every ?? null, tenant: c.tenant ?? null, forEachTenant: c.forEachTenant ?? null })),
    // In entry-name order, and within an entry in source order.
    diagnostics: analysed.flatMap((a) => a.diagnostics),
    agentRuns: analysed.flatMap((a) => a.agentRuns),
    workflowStarts: analysed.flatMap((a) => a.workflowStarts),
  };
}

/** The tools and agents: auto-tools take their table access from their entry, aiTools from their own file. */
async function analyseAi(root: string, app: AppDefinition, entries: readonly EntryModel[]): Promise<{ tools: ToolModel[]; agents: AgentModel[] }> {
  const aiFiles = await listAiFiles(root);
  const fileOf = (kind: 'agent' | 'aiTool', name: string) => aiFiles.find((f) => f.kind === kind && f.name === name)?.file ?? '';
  const tools = await Promise.all(
    appTools(app).map(async (t): Promise<ToolModel> => {
      let where: Pick<ToolModel, 'file' | 'reads' | 'writes' | 'analysis'>;
      if (t.source === 'entry') {
        const entry = entries.find((e) => e.name === t.name)!;
        where = { file: entry.file, reads: entry.access.reads, writes: entry.access.writes, analysis: entry.access.kind };
      } else if (t.source === 'external') {
        // What an external service touches is its own business; the tables its effects invalidate are what fw knows.
        where = { file: t.service.source, reads: [], writes: invalidatedTables(app, t.external), analysis: 'partial' };
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
        entry: t.source === 'entry' ? t.name : t.source === 'external' ? t.qualifiedName : null,
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
        inputSchema: toolInputJsonSchema(t),
        execution: t.source === 'external' ? 'external-runtime-endpoint' : 'fw-runtime-endpoint',
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

/** The external services of the app, with each entry's defaults filled in (policy user, read-only queries, commands needing approval). */
export function externalModels(app: AppDefinition): ExternalServiceModel[] {
  return (app.external ?? []).map(({ manifest, source }) => ({
    name: manifest.service.name,
    language: manifest.language ?? null,
    framework: manifest.framework ?? null,
    transport: manifest.service.transport,
    baseUrl: manifest.service.baseUrl ?? null,
    health: manifest.service.health ?? null,
    command: manifest.service.command ?? null,
    commandArgs: manifest.service.commandArgs ?? [],
    source,
    entries: [...manifest.entries]
      .sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name))
      .map((entry): ExternalEntryModel => ({
        service: manifest.service.name,
        name: entry.name,
        qualifiedName: `${manifest.service.name}.${entry.name}`,
        kind: entry.kind,
        route: `POST /external/${manifest.service.name}/${entry.kind === 'command' ? 'commands' : 'queries'}/${entry.name}`,
        ...entryDefaults(entry),
        effects: (entry.effects ?? []).map(normalizeEffect),
        invalidates: invalidatedTables(app, entry),
        description: entry.description ?? null,
        args: entry.argsSchema ?? null,
        result: entry.resultSchema ?? null,
      })),
  }));
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
