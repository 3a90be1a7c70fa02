import { fwVersion } from '../../runtime/core/version.ts';
import type { AppModel, ToolModel } from '../analyse/app-model.ts';

/**
 * `src/fw/_generated/agentTools.json`: every tool an agent can be given — each command, query and
 * liveQuery as an auto-tool, and each aiTool — with what it may do (risk, approval, read-only), the
 * tables it touches, the policy it runs under and how it executes.
 */
export interface AgentToolsJson {
  fwVersion: string;
  tools: ToolModel[];
}

export function buildAgentTools(model: AppModel): AgentToolsJson {
  return { fwVersion, tools: model.tools };
}
