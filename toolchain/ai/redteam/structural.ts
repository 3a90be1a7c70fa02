import type { AppModel, ToolModel } from '../../../plugin/analyse/app-model.ts';
import { type RedteamFinding, statusOf } from './findings.ts';

const secretWords = /secret|passw(or)?d|passphrase|api[-_ ]?key|access[-_ ]?key|private[-_ ]?key|token|credential|\benv(ironment)?\b/i;

/**
 * The deterministic pass over the app's tools and agents: write tools without approval, "read" tools
 * that write, tools whose name, description or input look like they carry secrets, and agents without
 * a step limit of their own. It reads the analysed app only; nothing runs.
 */
export function structuralFindings(model: AppModel): RedteamFinding[] {
  const findings: RedteamFinding[] = [];
  const add = (f: Omit<RedteamFinding, 'status'>) => findings.push({ ...f, status: statusOf(f.severity) });
  for (const tool of model.tools) {
    if (tool.risk !== 'read' && !tool.needsApproval) {
      add({
        code: 'approval_bypass_risk',
        severity: tool.risk === 'destructive' || tool.risk === 'external' ? 'critical' : 'high',
        tool: tool.name,
        agent: null,
        message: `${describe(tool)} (risk ${tool.risk}) runs without approval: a model can ${tool.risk === 'external' ? 'act outside the app' : 'change data'} on its own.`,
        hint: tool.source === 'entry' ? `Remove tool: { needsApproval: false } from ${tool.file}.` : `Remove needsApproval: false (or set risk: 'read' if it truly only reads) in ${tool.file}.`,
      });
    }
    if ((tool.risk === 'read' || tool.readOnly) && tool.writes.length > 0) {
      add({
        code: 'read_write_drift',
        severity: 'high',
        tool: tool.name,
        agent: null,
        message: `${describe(tool)} is a read tool (no approval) but its code writes ${tool.writes.join(', ')}.`,
        evidence: `${tool.file} writes ${tool.writes.join(', ')}`,
        hint: tool.source === 'entry' ? 'Move the write into a command (commands are write tools with approval).' : "Declare risk: 'write' (it then needs approval), or remove the write.",
      });
    }
    const surface = secretSurface(tool);
    if (surface.length > 0) {
      add({
        code: 'secret_like_surface',
        severity: tool.secrets.length > 0 && !tool.needsApproval ? 'high' : 'medium',
        tool: tool.name,
        agent: null,
        message: `${describe(tool)} looks like it handles secrets (${surface.join(', ')}); whatever it returns goes to the model and the chat.`,
        hint: 'Return derived facts (e.g. "configured: true") instead of secret values; keep secrets in ctx.secrets inside the handler.',
      });
    }
  }
  for (const agent of model.agents) {
    if (!agent.maxStepsDeclared) {
      add({
        code: 'unbounded_step_loop',
        severity: 'medium',
        tool: null,
        agent: agent.name,
        message: `Agent ${agent.name} declares no step limit; fw applies the default of ${agent.maxSteps} steps.`,
        hint: `Add stopWhen: { kind: 'stepCount', maxSteps: <n> } to ${agent.file}.`,
      });
    }
  }
  return findings;
}

function describe(tool: ToolModel): string {
  return tool.source === 'entry' ? `The auto-tool of ${tool.kind} ${tool.name}` : `aiTool ${tool.name}`;
}

function secretSurface(tool: ToolModel): string[] {
  const found: string[] = [];
  if (secretWords.test(tool.name)) found.push(`name "${tool.name}"`);
  if (secretWords.test(tool.description)) found.push('description');
  const properties = Object.keys((tool.inputSchema?.properties as Record<string, unknown> | undefined) ?? {});
  for (const p of properties) if (secretWords.test(p)) found.push(`input "${p}"`);
  if (tool.secrets.length > 0 && tool.risk === 'read' && !tool.needsApproval) found.push(`reads secrets ${tool.secrets.join(', ')} without approval`);
  return found;
}
