/**
 * The live hub, assembled from its rooms in hub/: groups (groups.ts), which of them rerun when
 * (scheduling.ts), the reruns themselves (reruns.ts, batched-reruns.ts), what subscribers are sent
 * (fan-out.ts), subscriptions and their limits (subscriptions.ts), what the hub reports (status.ts), and
 * which process of several on one database reruns a group (cluster.ts).
 * This file wires them to the log reader and owns the lifecycle: start, app reloads, close.
 */
import type { FwDatabase } from '../db/database.ts';
import { FwError, toFwError } from '../core/errors.ts';
import { admitEntry } from '../entry/pipeline.ts';
import { resolveTraceId } from '../core/trace.ts';
import { printable } from '../core/printable.ts';
import { pruneInvalidations } from './log.ts';
import { createInvalidationReader } from './reader.ts';
import { shutdownText } from './live-wire.ts';
import type { LiveHub, LiveOptions } from './hub/api.ts';
import { createHubContext } from './hub/context.ts';
import { createGroups } from './hub/groups.ts';
import { createScheduler } from './hub/scheduling.ts';
import { createFanOut } from './hub/fan-out.ts';
import { createRunGroup } from './hub/reruns.ts';
import { createBatchedReruns } from './hub/batched-reruns.ts';
import { createCluster } from './hub/cluster.ts';
import { startHeartbeats } from './hub/heartbeats.ts';
import { createSubscriptions } from './hub/subscriptions.ts';
import { hubStatus, subscriptionDebug } from './hub/status.ts';
import { loadTextSemantics } from './text-semantics.ts';
import { loadFunctionCatalog, newlyShadowed } from './function-reads.ts';

export type { LiveGroupStatus, LiveHub, LiveOptions, LiveStatus, SubscribeOutcome, SubscribeRequest, SubscriptionDebug } from './hub/api.ts';

/**
 * The subscription hub of one runtime process: groups identical subscriptions, re-runs each affected
 * group once per batch of invalidations from the log reader, and pushes changed results.
 *
 * @example
 *   const live = createLiveHub(db);
 *   live.setApp(app);
 *   await live.start();
 *   createRuntimeHandler({ app, db, dev: true, live });
 */
export function createLiveHub(db: FwDatabase, options: LiveOptions = {}): LiveHub {
  const context = createHubContext(db, options);
  const { limits } = context;
  const timers: Array<ReturnType<typeof setInterval>> = [];

  // The rooms call each other through these (late-bound: each is made below, before any call).
  const groups = createGroups((group) => scheduler.runOnce(group), (group) => cluster?.dispose(group));
  const fanOut = createFanOut(context);
  const scheduler = createScheduler(context, { groups, readerRevision: () => reader.revision(), rerun: (group) => (cluster ? cluster.rerun(group) : batched.rerun(group)) });
  const runGroup = createRunGroup(context, { groups, fanOut, scheduler, ran: (group) => cluster?.ran(group) });
  const batched = createBatchedReruns(context, { runGroup, committedRevision: scheduler.committedRevision });
  // Processes sharing a PostgreSQL database rerun each group once between them (cluster.ts); PGlite is one process.
  const cluster =
    db.driver.kind === 'postgres' && options.cluster !== false
      ? createCluster(context, { groups, fanOut, schedule: (group) => scheduler.schedule(group), runLocally: (group) => batched.rerun(group), leaseMs: options.clusterLeaseMs ?? 1_500, hears: () => reader.status().wakeups.listener !== 'deaf' })
      : undefined;
  const subscriptions = createSubscriptions(context, { groups, fanOut, scheduler, readerRevision: () => reader.revision() });

  const reader = createInvalidationReader(db, {
    onInvalidations: ({ rows, expired }) => scheduler.onInvalidations(rows, expired),
    onNotice: (row) => scheduler.onNotice(row),
    capturedTables: () => Object.keys(context.app?.schema.tables ?? {}),
    ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
    ...(options.safetyPollIntervalMs === undefined ? {} : { safetyPollIntervalMs: options.safetyPollIntervalMs }),
    ...(options.reconnectMinMs === undefined ? {} : { reconnectMinMs: options.reconnectMinMs }),
    ...(options.reconnectMaxMs === undefined ? {} : { reconnectMaxMs: options.reconnectMaxMs }),
  });

  return {
    limits,
    async revisionTokens(auth, revisions) {
      await fanOut.ready;
      // The same key a subscription of this caller gets (subscriptions.ts), so the tokens compare equal.
      return revisions.map((revision) => fanOut.token(auth.tenantId ?? '', revision));
    },
    async start() {
      context.functionCatalog = await loadFunctionCatalog(db);
      context.textSemantics = await loadTextSemantics(db);
      await reader.start();
      await cluster?.start();
      timers.push(startHeartbeats(subscriptions.connections, limits.heartbeatMs));
      if (context.pruneIntervalMs > 0) {
        const prune = setInterval(() => {
          pruneInvalidations(db.admin, { olderThanMs: context.retentionMs }).catch((error: unknown) =>
            console.error(`fw live: pruning the invalidation log failed: ${printable((error as Error).message)}`),
          );
        }, context.pruneIntervalMs);
        prune.unref();
        timers.push(prune);
      }
      // A function created since (an app's `area(integer)` beside pg_catalog's `area(box)`) may be what a
      // call proven at its run resolves to now: read the catalog again as often as the safety poll, and
      // rerun every group when a built-in's name gained another function (they are then refused, or
      // declare their reads). Rare (DDL), so every group rather than those that called the name.
      const recheck = setInterval(() => {
        loadFunctionCatalog(db).then(
          (catalog) => {
            const shadowed = newlyShadowed(context.functionCatalog, catalog);
            context.functionCatalog = catalog;
            if (shadowed && !context.closed) for (const group of groups.byKey.values()) void scheduler.schedule(group);
          },
          (error: unknown) => console.error(`fw live: reading the database's functions failed (retrying): ${printable((error as Error).message)}`),
        );
      }, options.safetyPollIntervalMs ?? 10_000);
      recheck.unref();
      timers.push(recheck);
    },

    setApp(next) {
      const changed = context.app !== undefined && context.app !== next;
      context.app = next;
      if (!changed) return;
      // The new code may read other tables: learn them again from the next runs.
      groups.knownReads.clear();
      for (const group of [...groups.byKey.values()]) {
        const entry = next.entries.get(group.name);
        const readmit = entry && entry.kind === 'liveQuery'
          ? admitEntry({ app: next, db }, entry, { name: group.name, auth: group.auth, traceId: resolveTraceId(undefined), args: group.rawArgs, external: true })
          : Promise.reject(new FwError('not_found', `liveQuery "${group.name}" no longer exists.`));
        readmit.then(
          (args) => {
            group.entry = entry!;
            group.args = args;
            void scheduler.schedule(group);
          },
          (thrown: unknown) => {
            const error = toFwError(thrown);
            const traceId = resolveTraceId(undefined);
            for (const subscription of [...group.subscribers]) {
              fanOut.sendError(subscription, error, traceId, true);
              subscriptions.remove(subscription);
              if (subscription.exclusive) subscription.connection.end();
            }
          },
        );
      }
    },

    checkCapacity: (auth, count, clientAddress) => subscriptions.checkCapacity(auth, count, clientAddress),
    attach: subscriptions.attach,
    refuse: subscriptions.refuse,
    subscribe: subscriptions.subscribe,
    status: () => hubStatus(context, { groups, subscriptions, reader, cluster }),
    debug: (subscriptionId) => subscriptionDebug(subscriptions, subscriptionId),

    async close(options = {}) {
      if (context.closed) return;
      context.closed = true;
      // No group runs again; the runs in flight are waited for below.
      const runsOver = [...groups.byKey.values()].map((group) => {
        clearTimeout(group.refreshTimer);
        return group.runs.close();
      });
      for (const timer of timers.splice(0)) clearInterval(timer);
      const finalText = options.reconnect ? shutdownText() : undefined;
      for (const connection of [...subscriptions.connections]) connection.end(finalText);
      await reader.close();
      await Promise.all(runsOver);
      await cluster?.close();
    },
  };
}
