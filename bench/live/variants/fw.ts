/**
 * fw: `createRuntimeHandler({ app, db, dev: true, live })` with `createLiveHub(db)` over
 * `createDatabase({ url })`, as an app mounts it. Only the per-tenant limit is raised, when one tenant
 * holds more subscriptions than the default 10 000.
 */
import { createDatabase } from '../../../runtime/db/database.ts';
import { createRuntimeHandler } from '../../../runtime/http/handler.ts';
import { createLiveHub } from '../../../runtime/live/hub.ts';
import { benchApp } from '../app.ts';
import type { CreateVariant } from './types.ts';

export const createFwVariant: CreateVariant = async (spec) => {
  const db = await createDatabase({ url: spec.url, poolSize: spec.poolSize });
  const app = benchApp();
  const hub = createLiveHub(db, { dev: true, maxSubscriptionsPerTenant: spec.maxSubscriptionsPerTenant });
  hub.setApp(app);
  await hub.start();
  const handler = createRuntimeHandler({ app, db, dev: true, live: hub });
  return {
    listener: (req, res) => handler(req, res),
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
    async close() {
      await hub.close();
      await db.close();
    },
  };
};
