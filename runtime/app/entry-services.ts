import type { AppDefinition } from '../core/app-definition.ts';
import type { FwDatabase } from '../db/database.ts';
import type { EntryServices } from '../entry/pipeline.ts';
import { type AiRuntime, type AiRuntimeOptions, createAiRuntime } from '../ai/ai-runtime.ts';
import { callExternalEntry } from '../external/services.ts';
import { planCommandStart } from '../workflows/start.ts';
import { planScheduledCall } from '../schedule/plan.ts';
import type { Clock } from '../core/clock.ts';

/** How the app's entries and agents run in one runtime (the AI settings; the rest comes with the app). */
export interface EntryServicesOptions {
  /** Models and settings of `ctx.ai`, `ctx.agent` and the agent routes. */
  ai?: Omit<AiRuntimeOptions, 'app' | 'db' | 'services'>;
  /** Entry spans carry the tenant id (`FW_TRACE_TENANT=1`). */
  traceTenant?: boolean;
  /** The time scheduled calls count from (default the system clock; tests move one). */
  clock?: Clock;
}

/** The pipeline's services without AI: enough for commands (with `ctx.startWorkflow`), queries and liveQueries. */
export function entryServices(app: AppDefinition, db: FwDatabase, options: Pick<EntryServicesOptions, 'traceTenant' | 'clock'> = {}): EntryServices {
  return {
    app,
    db,
    planWorkflowStart: (tenantId, name, args, startOptions) => planCommandStart(app, tenantId, name, args, startOptions),
    planScheduledCall: (name, args, at, where) => planScheduledCall(app, name, args, at, where),
    ...(options.traceTenant ? { traceTenant: true } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  };
}

/**
 * Everything an entry may use, for one app on one database: the pipeline's services (a command's
 * `ctx.startWorkflow`, `ctx.ai` of actions, workflows and endpoints) and the AI runtime whose tools
 * run entries through the same services. The one place they are wired together.
 */
export function assembleEntryServices(app: AppDefinition, db: FwDatabase, options: EntryServicesOptions = {}): { services: EntryServices; ai: AiRuntime } {
  const services: EntryServices = { ...entryServices(app, db, options), ai: (caller) => ai.context(caller) };
  const ai = createAiRuntime({ callExternal: callExternalEntry, ...options.ai, app, db, services });
  return { services, ai };
}
