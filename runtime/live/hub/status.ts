/**
 * What the hub reports of itself: `status()` (the admin route, the gauges) and `debug()` of one
 * subscription. Read-only views of the groups and subscriptions.
 */
import { describeReadSet } from '../read-set.ts';
import type { InvalidationReader } from '../reader.ts';
import type { LiveGroupStatus, LiveStatus, SubscriptionDebug } from './api.ts';
import type { HubContext } from './context.ts';
import type { Cluster } from './cluster.ts';
import type { Groups } from './groups.ts';
import type { Subscriptions } from './subscriptions.ts';

export interface StatusSources {
  groups: Groups;
  subscriptions: Subscriptions;
  reader: InvalidationReader;
  cluster: Cluster | undefined;
}

export function hubStatus(context: HubContext, { groups, subscriptions, reader, cluster }: StatusSources): LiveStatus {
  const byName = new Map<string, { groups: number; subscriptions: number; preciseGroups: number; groupList: LiveGroupStatus[] }>();
  for (const group of groups.byKey.values()) {
    const entry = byName.get(group.name) ?? { groups: 0, subscriptions: 0, preciseGroups: 0, groupList: [] };
    entry.groups++;
    entry.subscriptions += group.subscribers.size;
    const precise = group.readSet !== undefined && [...group.readSet.values()].every((accesses) => accesses.every((access) => access.conditions.length > 0));
    if (precise) entry.preciseGroups++;
    if (entry.groupList.length < STATUS_GROUPS) {
      entry.groupList.push({
        args: group.rawArgs,
        tenantId: group.auth.tenantId,
        subscribers: group.subscribers.size,
        readSet: group.readSet ? describeReadSet(group.readSet) : null,
        runs: group.runCount,
        unchangedRuns: group.unchangedRuns,
        received: group.received,
        role: cluster?.roleOf(group) ?? null,
        lastRunAt: group.lastRunAt === 0 ? null : new Date(group.lastRunAt).toISOString(),
        lastRunMs: Math.round(group.lastRunMs * 10) / 10,
        resultBytes: group.json === undefined ? null : Buffer.byteLength(group.json),
        lastError: group.lastError?.code ?? null,
      });
    }
    byName.set(group.name, entry);
  }
  return {
    revision: reader.revision(),
    cluster: cluster?.status() ?? null,
    reader: reader.status(),
    connections: subscriptions.connections.size,
    subscriptions: subscriptions.byId.size,
    groups: groups.byKey.size,
    ...context.counters,
    retentionMs: context.retentionMs,
    liveQueries: [...byName]
      .map(([name, counts]) => ({ name, ...counts, reads: [...(groups.knownReads.get(name) ?? [])].sort() }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  };
}

export function subscriptionDebug(subscriptions: Subscriptions, subscriptionId: string): SubscriptionDebug | undefined {
  const subscription = subscriptions.byId.get(subscriptionId);
  if (!subscription) return undefined;
  const { group, connection } = subscription;
  return {
    subscriptionId: subscription.id,
    ...(subscription.key === undefined ? {} : { key: subscription.key }),
    liveQuery: group.name,
    args: group.rawArgs,
    auth: { kind: group.auth.kind, userId: group.auth.userId, tenantId: group.auth.tenantId, role: group.auth.role },
    createdAt: new Date(subscription.createdAt).toISOString(),
    lastSentRevision: subscription.sentRevision ?? null,
    connection: {
      id: connection.id,
      blocked: connection.isBlocked,
      pendingEvents: connection.pendingSlots,
      written: connection.written,
      superseded: connection.superseded,
    },
    group: {
      subscribers: group.subscribers.size,
      reads: [...(group.readSet?.keys() ?? [])].sort(),
      readSet: group.readSet ? describeReadSet(group.readSet) : null,
      revision: group.revision,
      runs: group.runCount,
      unchangedRuns: group.unchangedRuns,
      lastRunMs: Math.round(group.lastRunMs * 100) / 100,
      running: group.runs.busy,
      lastError: group.lastError ? { code: group.lastError.code, message: group.lastError.message } : null,
    },
  };
}

/** Groups per liveQuery listed with their read sets in `status()`. */
const STATUS_GROUPS = 20;
