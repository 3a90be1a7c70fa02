import { defineCommand } from 'citty';
import { type CheckDiagnostic, formatDiagnostic } from '../../plugin/analyse/check-diagnostic.ts';
import type { AgentToolsJson } from '../../plugin/generate/agent-tools.ts';
import type { CapabilityMap } from '../../plugin/generate/capability-map.ts';
import type { FrontendGraphJson } from '../../plugin/generate/frontend-graph.ts';
import { type ClientSurface, type CronList, type InspectTarget, inspectApp } from '../../toolchain/inspect/inspect.ts';
import { log, printJson } from '../output.ts';
import { commandMeta } from '../command-meta.ts';

const commonArgs = {
  root: { type: 'string', description: 'The app directory', default: '.' },
  json: { type: 'boolean', description: 'Print one JSON document' },
} as const;

function inspectCommand<T>(target: InspectTarget, description: string, print: (value: T) => void) {
  return defineCommand({
    meta: { name: target, description },
    args: commonArgs,
    async run({ args }) {
      const value = await inspectApp({ root: args.root, target });
      if (args.json) printJson({ ok: true, ...value });
      else print(value as T);
    },
  });
}

export default defineCommand({
  meta: commandMeta('inspect'),
  subCommands: {
    client: inspectCommand<ClientSurface>('client', 'The generated api: each entry with kind, route, args schema and hook names', printClient),
    frontend: inspectCommand<FrontendGraphJson>('frontend', 'The frontend graph (routes, components, hooks, UI actions, provider) and its diagnostics', printFrontend),
    capabilities: inspectCommand<CapabilityMap>('capabilities', 'The capability map: UI action → component → route → hook → entry → tables → policy', printCapabilities),
    'agent-tools': inspectCommand<AgentToolsJson>('agent-tools', 'The tools agents can call (agentTools.json): risk, approval, tables, policy', printAgentTools),
    crons: inspectCommand<CronList>('crons', 'The crons of src/crons.ts: schedule, what each calls, next run', printCrons),
  },
});

function printCrons(value: CronList): void {
  if (value.crons.length === 0) return log('No crons (src/crons.ts).');
  log(`${value.crons.length} cron(s)`);
  for (const c of value.crons) log(`  ${c.name.padEnd(24)} ${c.schedule.padEnd(32)} → ${c.call}${c.tenant ? ` in tenant ${c.tenant}` : ''} · next ${c.nextRun ?? '(none)'}`);
}

export function printAgentTools(value: Pick<AgentToolsJson, 'tools'>): void {
  log(`${value.tools.length} tool(s)`);
  for (const t of value.tools) {
    log(`  ${t.name.padEnd(24)} ${t.kind.padEnd(9)} risk ${t.risk.padEnd(11)} ${t.needsApproval ? 'needs approval' : 'no approval   '} ${t.readOnly ? 'read-only' : 'writes ' + (t.writes.join(', ') || '?')} · policy ${t.policy}`);
  }
}

function printClient(surface: ClientSurface): void {
  log(`fw inspect client: ${surface.entries.length} entries, ${surface.external.length} external · bridge ${surface.bridge ?? '(none)'}`);
  for (const e of surface.entries) log(`  ${e.kind.padEnd(9)} ${e.name.padEnd(24)} ${(e.route ?? '').padEnd(32)} ${e.hooks.react}  policy ${e.policy}${e.onceRoute ? `  (once: ${e.onceRoute})` : ''}`);
  for (const e of surface.external) log(`  ${e.kind.padEnd(9)} ${e.name.padEnd(24)} ${e.route.padEnd(32)} ${e.hooks.react}  policy ${e.policy} · external${e.result ? '' : ' · result unknown (no resultSchema)'}`);
}

function printFrontend(graph: FrontendGraphJson): void {
  if (graph.layout === 'none') {
    log('fw inspect frontend: no web/ in this app.');
    return;
  }
  log(`fw inspect frontend: ${graph.layout} app · bridge ${graph.bridge.file ?? '(missing)'} · ${graph.routes.length} routes, ${graph.components.length} components, ${graph.hooks.length} hook calls, ${graph.actions.length} UI actions, ${graph.providers.length} providers`);
  for (const r of graph.routes) log(`  route ${r.path}  → ${r.components.join(', ') || '(no component)'}`);
  for (const h of graph.hooks) log(`  ${h.file}:${h.line}:${h.column} ${h.hook}(${h.entry ?? '…'}) ${h.status}`);
  printDiagnostics(graph.diagnostics);
}

function printCapabilities(map: CapabilityMap): void {
  log(`fw inspect capabilities: ${map.entries.length} entries, ${map.ui.paths.length} UI paths`);
  for (const e of map.entries) log(`  ${e.name.padEnd(24)} reads ${e.reads.join(', ') || '–'} · writes ${e.writes.join(', ') || '–'} · policy ${e.policy}${e.analysis === 'partial' ? ' (partial)' : ''}`);
  for (const p of map.ui.paths) {
    const action = p.action ? `${p.action.event ?? p.action.handler ?? 'call'}${p.action.element ? ` on <${p.action.element}>` : ''} › ` : '';
    log(`  ${p.routes.join(', ') || '(no route)'} › ${p.component ?? '(module)'} › ${action}${p.hook.name} › ${p.entry ?? '…'} (${p.status}) · policy ${p.policy ?? '–'}`);
  }
  if (map.ui.entriesWithoutUi.length > 0) log(`  no UI path: ${map.ui.entriesWithoutUi.join(', ')}`);
}

/** The `file:line:col severity code message` lines and a one-line summary. */
export function printDiagnostics(diagnostics: readonly CheckDiagnostic[]): void {
  for (const d of diagnostics) log(formatDiagnostic(d));
  const count = (s: CheckDiagnostic['severity']) => diagnostics.filter((d) => d.severity === s).length;
  log(`${count('error')} error(s), ${count('warning')} warning(s), ${count('info')} info`);
}
