import type { StandardSchemaV1 } from '@standard-schema/spec';
import { argsJsonSchema } from '../core/args-schema.ts';
import type { EntryDefinition, EntryToolOption } from '../core/entries.ts';
import type { ManifestEntry } from '../core/external-manifest.ts';
import { entryDefaults } from '../core/external-manifest.ts';
import { type ExternalService } from '../core/app-definition.ts';
import type { AppDefinition } from '../core/app-definition.ts';
import { type AgentDefinition, type AiToolDefinition, externalToolName, isAiTool, isExternalTool, type ToolRisk } from '../core/ai-definitions.ts';

/** One tool agents can call: an entry's auto-tool, an `aiTool`, or an external entry's auto-tool. */
export type CatalogTool =
  | (CatalogToolBase & { source: 'entry'; entry: EntryDefinition; kind: 'command' | 'query' | 'liveQuery'; inputSchema: StandardSchemaV1 })
  | (CatalogToolBase & { source: 'aiTool'; tool: AiToolDefinition; kind: 'aiTool'; inputSchema: StandardSchemaV1 })
  | (CatalogToolBase & { source: 'external'; service: ExternalService; external: ManifestEntry; kind: 'command' | 'query'; qualifiedName: string; argsSchema: Record<string, unknown> | null });

interface CatalogToolBase {
  name: string;
  description: string;
  risk: ToolRisk;
  needsApproval: boolean;
  /** Runs in a read-only transaction: nothing it does can write. */
  readOnly: boolean;
  /** `public`, `user`, or a named policy; aiTools run for any signed-in caller (`user`). */
  policy: string;
}

const callableKinds = new Set(['command', 'query', 'liveQuery']);

/**
 * The auto-tool of a command, query or liveQuery, or undefined when it has none: `system` entries
 * are never tools (they are not callable from outside), nor are entries with `tool: false`.
 */
export function entryTool(name: string, entry: EntryDefinition): CatalogTool | undefined {
  if (!callableKinds.has(entry.kind) || entry.policy === 'system') return undefined;
  const option = entry.options.tool as EntryToolOption | undefined;
  if (option === false) return undefined;
  const write = entry.kind === 'command';
  return {
    source: 'entry',
    entry,
    kind: entry.kind as 'command' | 'query' | 'liveQuery',
    name,
    description: option?.description ?? entry.description ?? defaultDescription(name, entry.kind),
    risk: write ? 'write' : 'read',
    needsApproval: option?.needsApproval ?? write,
    readOnly: !write,
    policy: entry.policy,
    inputSchema: entry.args,
  };
}

function defaultDescription(name: string, kind: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return kind === 'command' ? `Runs the ${name} command (${words}); it writes data.` : `Reads ${name} (${words}).`;
}

function aiToolEntry(name: string, tool: AiToolDefinition): CatalogTool {
  return {
    source: 'aiTool',
    tool,
    kind: 'aiTool',
    name,
    description: tool.description,
    risk: tool.risk,
    needsApproval: tool.needsApproval,
    readOnly: tool.risk === 'read',
    policy: 'user',
    inputSchema: tool.inputSchema,
  };
}

/** The auto-tool of an external entry: reads without approval, commands per `needsApproval` (default yes). */
export function externalEntryTool(service: ExternalService, entry: ManifestEntry): CatalogTool {
  const defaults = entryDefaults(entry);
  const qualifiedName = `${service.manifest.service.name}.${entry.name}`;
  return {
    source: 'external',
    service,
    external: entry,
    kind: entry.kind,
    qualifiedName,
    name: externalToolName(qualifiedName),
    description: entry.description ?? `${entry.kind === 'command' ? 'Runs' : 'Reads'} ${qualifiedName} of the external service ${service.manifest.service.name}.`,
    risk: defaults.risk,
    needsApproval: defaults.needsApproval,
    readOnly: entry.kind === 'query',
    policy: defaults.policy,
    argsSchema: entry.argsSchema ?? null,
  };
}

/** Finds an external entry by qualified name, or undefined. */
export function findExternalTool(app: AppDefinition, qualifiedName: string): CatalogTool | undefined {
  for (const service of app.external ?? []) {
    for (const entry of service.manifest.entries) {
      if (`${service.manifest.service.name}.${entry.name}` === qualifiedName) return externalEntryTool(service, entry);
    }
  }
  return undefined;
}

/** Every tool of the app: auto-tools, aiTools, then external auto-tools, each sorted by name. */
export function appTools(app: AppDefinition): CatalogTool[] {
  const autoTools = [...app.entries].sort(([a], [b]) => a.localeCompare(b)).flatMap(([name, entry]) => entryTool(name, entry) ?? []);
  const aiTools = [...(app.tools ?? [])].sort(([a], [b]) => a.localeCompare(b)).map(([name, tool]) => aiToolEntry(name, tool));
  const external = (app.external ?? []).flatMap((service) => service.manifest.entries.map((entry) => externalEntryTool(service, entry))).sort((a, b) => a.name.localeCompare(b.name));
  return [...autoTools, ...aiTools, ...external];
}

/**
 * The tools of one agent, by the names it lists them under (the load checks those are the app's own
 * names). An entry listed with `tool: false` or policy `system` is left out.
 */
export function agentTools(app: AppDefinition, definition: AgentDefinition): CatalogTool[] {
  const found: CatalogTool[] = [];
  for (const [name, tool] of Object.entries(definition.tools).sort(([a], [b]) => a.localeCompare(b))) {
    const entry = isAiTool(tool) ? aiToolEntry(name, tool) : isExternalTool(tool) ? findExternalTool(app, tool.qualifiedName) : entryTool(name, tool);
    if (entry) found.push(entry);
  }
  return found;
}

/** The JSON Schema of a tool's input (what the model sees), or null when its schema offers none. */
export function toolInputJsonSchema(tool: CatalogTool): Record<string, unknown> | null {
  if (tool.source === 'external') return tool.argsSchema;
  const schema = argsJsonSchema(tool.inputSchema);
  return schema.kind === 'json-schema' ? schema.schema : null;
}
