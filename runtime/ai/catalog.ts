import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { EntryDefinition, EntryToolOption } from '../entries.ts';
import type { AppDefinition } from '../registry.ts';
import { type AgentDefinition, type AiToolDefinition, isAiTool, type ToolRisk } from './define.ts';

/** One tool agents can call: an entry's auto-tool or an `aiTool`. */
export type CatalogTool =
  | (CatalogToolBase & { source: 'entry'; entry: EntryDefinition; kind: 'command' | 'query' | 'liveQuery' })
  | (CatalogToolBase & { source: 'aiTool'; tool: AiToolDefinition; kind: 'aiTool' });

interface CatalogToolBase {
  name: string;
  description: string;
  risk: ToolRisk;
  needsApproval: boolean;
  /** Runs in a read-only transaction: nothing it does can write. */
  readOnly: boolean;
  /** `public`, `user`, or a named policy; aiTools run for any signed-in caller (`user`). */
  policy: string;
  inputSchema: StandardSchemaV1;
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

/** Every tool of the app, auto-tools then aiTools, each sorted by name. */
export function appTools(app: AppDefinition): CatalogTool[] {
  const autoTools = [...app.entries].sort(([a], [b]) => a.localeCompare(b)).flatMap(([name, entry]) => entryTool(name, entry) ?? []);
  const aiTools = [...(app.tools ?? [])].sort(([a], [b]) => a.localeCompare(b)).map(([name, tool]) => aiToolEntry(name, tool));
  return [...autoTools, ...aiTools];
}

/**
 * The tools of one agent, by the names it lists them under (the load checks those are the app's own
 * names). An entry listed with `tool: false` or policy `system` is left out.
 */
export function agentTools(app: AppDefinition, definition: AgentDefinition): CatalogTool[] {
  const found: CatalogTool[] = [];
  for (const [name, tool] of Object.entries(definition.tools).sort(([a], [b]) => a.localeCompare(b))) {
    const entry = isAiTool(tool) ? aiToolEntry(name, tool) : entryTool(name, tool);
    if (entry) found.push(entry);
  }
  return found;
}
