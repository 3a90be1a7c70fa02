import path from 'node:path';
import { liveModelsConfigured } from '../../runtime/ai/models.ts';
import { type AiTrace, readTrace } from '../../runtime/ai/traces.ts';
import { FwFailure } from '../../runtime/core/failure.ts';
import { fwVersion } from '../../runtime/core/version.ts';
import { fetchAdmin } from '../admin/admin-client.ts';
import { type AgentModel, analyseApp, type ToolModel } from '../../plugin/analyse/app-model.ts';
import { openAppDatabase } from '../../plugin/database-target.ts';
import { loadAppOnce } from '../../plugin/load-app-once.ts';
import { readRuntimeFile } from '../dev/runtime-file.ts';

/** `fw ai tools`: every tool agents can be given (the content of agentTools.json). */
export async function listAiTools(root: string): Promise<{ fwVersion: string; tools: ToolModel[] }> {
  const model = await analyseApp(path.resolve(root), await loadAppOnce(path.resolve(root)));
  return { fwVersion, tools: model.tools };
}

/** `fw ai agents`: the agents, their tools and limits, and which models a run would use now. */
export async function listAiAgents(root: string): Promise<{ fwVersion: string; models: 'gateway' | 'mock'; agents: AgentModel[] }> {
  const model = await analyseApp(path.resolve(root), await loadAppOnce(path.resolve(root)));
  return { fwVersion, models: liveModelsConfigured() ? 'gateway' : 'mock', agents: model.agents };
}

/**
 * `fw ai trace <traceId>`: the runs recorded under a trace id. Asks the app's running `fw dev` when
 * there is one (it holds the embedded database), otherwise reads the app's database itself.
 */
export async function showAiTrace(root: string, traceId: string, target: { url?: string; token?: string } = {}): Promise<{ traceId: string; runs: AiTrace[] }> {
  const absolute = path.resolve(root);
  let runs: AiTrace[];
  if (target.url || readRuntimeFile(absolute)) {
    runs = ((await fetchAdmin({ root: absolute, ...target }, `/_fw/ai/traces/${encodeURIComponent(traceId)}`)) as { runs: AiTrace[] }).runs;
  } else {
    const db = await openAppDatabase(absolute);
    try {
      runs = await readTrace(db, traceId);
    } finally {
      await db.close();
    }
  }
  if (runs.length === 0) {
    throw new FwFailure('trace_not_found', `No AI run was recorded under trace id "${traceId}".`, {
      suggestions: ['The traceId is in every /ai/agents/run response and in the x-fw-trace-id header of /ai/agents/chat.'],
    });
  }
  return { traceId, runs };
}
