import type { EntryKind } from '../../runtime/core/entry-types.ts';
import type { ColumnDefault, ColumnKind, IndexSpec, ReferentialAction } from '../../runtime/core/schema.ts';
import { fwVersion } from '../../runtime/core/version.ts';
import { DEFAULT_MAX_STEPS, MAX_STEPS_CEILING } from '../../runtime/core/ai-definitions.ts';
import type { AgentModel, AppModel, ExternalEntryModel } from '../analyse/app-model.ts';
import type { FrontendGraph } from '../analyse/frontend/graph.ts';

/**
 * `src/fw/_generated/agentContract.json`: what a coding agent needs to change the app safely — its
 * rules, policies, entries and tables. One section per concern; later issues add theirs (`ai`,
 * `frontend`) beside these, so a consumer reads the sections it knows and ignores the rest.
 */
export interface AgentContract {
  fwVersion: string;
  rules: Array<{ id: string; text: string }>;
  policies: Array<{ name: string; kind: 'built-in' | 'named'; description: string; entries: string[] }>;
  entries: Array<{
    name: string;
    kind: EntryKind;
    file: string;
    route: string | null;
    policy: string;
    description: string | null;
    tenantScoped: boolean | 'unknown';
    reads: string[];
    writes: string[];
    analysis: 'complete' | 'partial';
    args: Record<string, unknown> | null;
  }>;
  tables: Array<{
    name: string;
    tenantScoped: boolean;
    columns: Array<{
      name: string;
      kind: ColumnKind;
      nullable: boolean;
      primaryKey: boolean;
      unique: boolean;
      default: ColumnDefault | null;
      /** The allowed values of an enum column; null for other kinds. */
      values: readonly string[] | null;
      references: { table: string; column: string; onDelete: ReferentialAction } | null;
    }>;
    indexes: Array<Required<IndexSpec>>;
  }>;
  /** Entries of external services (other languages, through fw's bridge). */
  external: Array<ExternalEntryModel & { transport: string; source: string }>;
  /** Agents and their tools: who may run what, under which rules, through which endpoints. */
  ai: {
    rules: Array<{ id: string; text: string }>;
    endpoints: string[];
    defaultMaxSteps: number;
    agents: AgentModel[];
    tools: Array<{ name: string; kind: string; risk: string; needsApproval: boolean; readOnly: boolean; policy: string }>;
  };
  /** The web app: where its bridge and provider are, its rules, which UI reaches each entry, and what the checks found. */
  frontend: {
    layout: FrontendGraph['layout'];
    bridge: string | null;
    providers: Array<{ kind: FrontendGraph['providers'][number]['kind']; file: string; mode: FrontendGraph['providers'][number]['mode'] }>;
    rules: Array<{ id: string; text: string }>;
    routes: Array<{ path: string; components: string[] }>;
    entries: Array<{ name: string; kind: EntryKind; components: string[]; routes: string[]; actions: number }>;
    diagnostics: Array<{ code: string; severity: 'error' | 'warning' | 'info'; file: string; line: number; column: number; message: string }>;
  };
}

const frontendRules: AgentContract['frontend']['rules'] = [
  { id: 'bridge-only', text: 'Components import hooks and the api from the bridge file (web/src/lib/fw.ts, web/composables/fw.ts or web/lib/fw.ts), never from src/fw/_generated/ directly.' },
  { id: 'no-raw-fetch', text: 'Components call entries through hooks (useCommand/useQuery/useLiveQuery or useFwCommand/useFwQuery/useFwLiveQuery), never with fetch/axios/EventSource to /commands, /queries, /live or /external.' },
  { id: 'provider-once', text: 'FwProvider (or the Nuxt fw plugins) is set up once, in the layout or entry file.' },
  { id: 'no-server-code', text: 'Frontend code never imports fwjs, fwjs/runtime, database drivers, node: builtins or backend files under src/ (type-only imports excepted).' },
  { id: 'no-agents-in-frontend', text: 'Agents and models run in actions, workflows, endpoints and server-only code; never in commands, queries, liveQueries or frontend code.' },
];

const aiRules: AgentContract['ai']['rules'] = [
  { id: 'ai-context', text: 'Agents and models run in actions, workflows, endpoints and server-only code (ctx.agent.run, ctx.ai.*); commands, queries and liveQueries have no ctx.ai.' },
  { id: 'tools-as-caller', text: 'Every tool runs through the runtime as the caller: the same auth, tenant, policies and telemetry; a tool is offered only to callers its policy admits.' },
  { id: 'approvals', text: 'Command auto-tools and aiTools that are not read-only need approval by default; approval requests are signed, so a client cannot fabricate one.' },
  { id: 'step-limit', text: `Every agent has a step limit (stopWhen: { kind: 'stepCount', maxSteps }); without one ${DEFAULT_MAX_STEPS} applies, at most ${MAX_STEPS_CEILING}; a run's maxSteps may lower it, never raise it.` },
  { id: 'tool-errors', text: 'Tool errors reach the model as fw error codes; internal messages are redacted.' },
  { id: 'secrets', text: 'aiTool handlers see only the environment variables they declare in secrets (ctx.secrets).' },
  { id: 'telemetry', text: 'Traces keep counts, timings and outcomes; prompts and outputs only when the app sets FW_AI_RECORD_CONTENT=1.' },
];

const rules: AgentContract['rules'] = [
  { id: 'command-transaction', text: 'A command runs in its own read-write transaction: it commits when the handler returns and rolls back when it throws.' },
  { id: 'query-read-only', text: 'Queries and liveQueries run in READ ONLY transactions: the database refuses any write inside them.' },
  { id: 'no-nested-transactions', text: 'Commands and queries use ctx.db as given (their own transaction); opening a nested ctx.db.transaction() there is refused. Actions get a statement-level ctx.db and group statements with ctx.db.transaction().' },
  {
    id: 'tenant-isolation',
    text: 'Tenant-scoped tables have a tenant_id column filled from the caller’s tenant and are isolated by PostgreSQL row-level security: a statement sees and writes only the caller’s tenant’s rows, with or without a where clause.',
  },
  { id: 'default-policy', text: 'Entries default to policy "user" (any signed-in caller); "system" entries are never callable over HTTP.' },
  { id: 'entry-names', text: 'An entry’s name is its file name in camelCase (src/commands/create-note.ts is createNote); names are unique across kinds.' },
  { id: 'generated-files', text: 'Files in src/fw/_generated/ are written by fw generate; edit the sources and regenerate instead of editing them.' },
];

const builtInPolicies: ReadonlyArray<{ name: string; description: string }> = [
  { name: 'public', description: 'Anyone, including anonymous callers.' },
  { name: 'user', description: 'Any signed-in caller (the default).' },
  { name: 'system', description: 'Never callable over HTTP; only internal calls made with system auth.' },
];

/**
 * Builds agentContract.json from the analysed app.
 *
 * @example
 *   buildAgentContract(model).tables[0]?.columns[0]
 *   // { name: 'id', kind: 'uuid', nullable: false, primaryKey: true, unique: false, default: { kind: 'random_uuid' }, values: null, references: null }
 */
export function buildAgentContract(model: AppModel, frontend: FrontendGraph): AgentContract {
  // Manifest policies join the bindings: an external entry is listed under its policy by qualified name.
  const entriesUsing = (policy: string) => [
    ...model.entries.filter((e) => e.policy === policy).map((e) => e.name),
    ...model.external.flatMap((s) => s.entries.filter((e) => e.policy === policy).map((e) => e.qualifiedName)),
  ];
  return {
    fwVersion,
    rules,
    policies: [
      ...builtInPolicies.map((p) => ({ name: p.name, kind: 'built-in' as const, description: p.description, entries: entriesUsing(p.name) })),
      ...model.policies.map((name) => ({ name, kind: 'named' as const, description: 'Defined in src/policies.ts.', entries: entriesUsing(name) })),
    ],
    entries: model.entries.map((entry) => ({
      name: entry.name,
      kind: entry.kind,
      file: entry.file,
      route: entry.route,
      policy: entry.policy,
      description: entry.description,
      tenantScoped: entry.tenantScoped,
      reads: entry.access.reads,
      writes: entry.access.writes,
      analysis: entry.access.kind,
      args: entry.args.kind === 'json-schema' ? entry.args.schema : null,
    })),
    tables: model.tables.map(({ name, table }) => ({
      name,
      tenantScoped: table.tenantScoped,
      // Declaration order: it is the column order of the table.
      columns: Object.entries(table.columns).map(([column, { spec }]) => ({
        name: column,
        kind: spec.kind,
        nullable: spec.nullable,
        primaryKey: spec.primaryKey,
        unique: spec.unique,
        default: spec.default ?? null,
        values: spec.values ?? null,
        references: spec.references ?? null,
      })),
      indexes: table.indexes.map((index) => ({ columns: index.columns, unique: index.unique ?? false })),
    })),
    external: model.external.flatMap((service) => service.entries.map((e) => ({ ...e, transport: service.transport, source: service.source }))),
    ai: {
      rules: aiRules,
      endpoints: ['POST /ai/agents/run', 'POST /ai/agents/chat'],
      defaultMaxSteps: DEFAULT_MAX_STEPS,
      agents: model.agents,
      tools: model.tools.map((t) => ({ name: t.name, kind: t.kind, risk: t.risk, needsApproval: t.needsApproval, readOnly: t.readOnly, policy: t.policy })),
    },
    frontend: {
      layout: frontend.layout,
      bridge: frontend.bridge.file,
      providers: frontend.providers.map((p) => ({ kind: p.kind, file: p.file, mode: p.mode })),
      rules: frontend.layout === 'none' ? [] : frontendRules,
      routes: frontend.routes.map((r) => ({ path: r.path, components: r.components })),
      entries: frontend.entries.map((e) => ({ name: e.name, kind: e.kind, components: e.components, routes: e.routes, actions: e.actions.length })),
      diagnostics: frontend.diagnostics.map((d) => ({ code: d.code, severity: d.severity, file: d.file, line: d.line, column: d.column, message: d.message })),
    },
  };
}
