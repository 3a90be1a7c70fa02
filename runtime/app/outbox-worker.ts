import type { AppDefinition } from '../core/app-definition.ts';
import type { FwDatabase } from '../db/database.ts';
import { actionsByEvent, deliverRow } from '../outbox/deliver.ts';
import { createDeliveryWorker, type DeliveryWorkerSettings, type OutboxWorker, type RowDelivery } from '../outbox/worker.ts';
import { runWorkflowAttempt, settleWorkflowRun } from '../workflows/engine.ts';
import { isWorkflowEvent, startEventWorkflows, workflowOfEvent, workflowsOn } from '../workflows/start.ts';
import type { EntryServices } from '../entry/pipeline.ts';
import { runScheduledCall } from '../schedule/deliver.ts';
import { entryOfCallEvent, isCallEvent } from '../schedule/plan.ts';
import { createCronTicker } from '../schedule/cron-ticks.ts';
import { cronOfTenantsEvent, fanOutToTenants, isTenantsEvent } from '../schedule/tenant-fan-out.ts';
import { deliverSignal, isSignalEvent, signalOfEvent } from '../workflows/signals.ts';
import { assembleEntryServices, type EntryServicesOptions } from './entry-services.ts';

export interface OutboxWorkerOptions extends DeliveryWorkerSettings, EntryServicesOptions {
  app: AppDefinition;
  db: FwDatabase;
}

/**
 * The outbox worker of an app: delivers the events commands emit (`_fw_outbox`) to the actions
 * listening `on` them and runs workflow runs, after the command committed. At-least-once: a row is
 * claimed with a lease, its actions run, and only then is it marked `delivered`; a failure is retried
 * with backoff until `maxAttempts`, then the row is `dead` with its last error. Any number of workers
 * may share one database.
 *
 * @example
 *   const worker = createOutboxWorker({ app, db });
 *   worker.start();
 *   // …
 *   await worker.stop();
 */
export function createOutboxWorker(options: OutboxWorkerOptions): OutboxWorker {
  const { ai, traceTenant, ...settings } = options;
  return createDeliveryWorker({
    ...settings,
    deliveryFor: (app) =>
      appDelivery(assembleEntryServices(app, options.db, { ...(ai ? { ai } : {}), ...(traceTenant ? { traceTenant } : {}), ...(options.clock ? { clock: options.clock } : {}) }).services),
  });
}

/**
 * What a row of the app runs: a workflow run's attempt, a scheduled call, a signal, a cron's tick in
 * every tenant, or the actions and workflows listening for its event.
 */
function appDelivery(services: EntryServices): RowDelivery {
  const { app } = services;
  const actions = actionsByEvent(app);
  const listeners = (event: string) => ({ actions: actions.get(event) ?? [], workflows: workflowsOn(app, event) });
  const crons = createCronTicker(app, services.db.admin);
  return {
    beforeClaim: (now) => crons.check(now),
    names(row) {
      if (isWorkflowEvent(row.event)) return [workflowOfEvent(row.event)];
      if (isCallEvent(row.event)) return [entryOfCallEvent(row.event)];
      if (isSignalEvent(row.event)) return [`signal ${signalOfEvent(row.event)}`];
      if (isTenantsEvent(row.event)) return [`cron ${cronOfTenantsEvent(row.event)}`];
      const { actions: bound, workflows } = listeners(row.event);
      return [...bound.map((b) => b.name), ...workflows];
    },
    deliver(row) {
      if (isWorkflowEvent(row.event)) return runWorkflowAttempt(services, row);
      if (isCallEvent(row.event)) return runScheduledCall(services, row);
      if (isSignalEvent(row.event)) return deliverSignal(services, row);
      if (isTenantsEvent(row.event)) return fanOutToTenants(services, row);
      return deliverRow(services, row, listeners(row.event), (started, names) => startEventWorkflows(services.db.admin, app, started, names));
    },
    async failed(row, status, error) {
      if (isWorkflowEvent(row.event)) await settleWorkflowRun(services, row, status, error);
    },
  };
}
