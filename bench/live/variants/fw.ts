/**
 * fw: `createRuntime({ app, db, dev: true })` (its handler and live hub) over
 * `createDatabase({ url })`, as an app mounts it. Only the per-tenant limit is raised, when one tenant
 * holds more subscriptions than the default 10 000.
 */
import { createDatabase } from '../../../runtime/db/database.ts';
import { createRuntime } from '../../../runtime/create-runtime.ts';
import { benchApp } from '../app.ts';
import type { CreateVariant } from './types.ts';

export const createFwVariant: CreateVariant = async (spec) => {
  const db = await createDatabase({ url: spec.url, poolSize: spec.poolSize });
  const app = benchApp();
  const runtime = await createRuntime({ app, db, dev: true, live: { maxSubscriptionsPerTenant: spec.maxSubscriptionsPerTenant } });
  const hub = runtime.live!;
  return {
    listener: (req, res) => runtime.handler(req, res),
    counters() {
      const status = hub.status();
      return {
        snapshotQueries: status.runs,
        unchangedRuns: status.unchangedRuns,
        logReads: status.reader.reads,
        notices: status.reader.notices,
        notifications: status.reader.wakeups.notifications,
        framesSent: status.snapshotsSent,
        connections: status.connections,
        subscriptions: status.subscriptions,
        groups: status.groups,
      };
    },
    close: () => runtime.close(),
  };
};
