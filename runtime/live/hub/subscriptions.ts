/**
 * Subscriptions: admitting one (the liveQuery, its args and policy through the entry pipeline, then the
 * limits), joining or opening its group, its first event (a snapshot, or `up-to-date` / `reset` on a
 * resume), and its end when its stream closes. Also the streams themselves, tracked for heartbeats and
 * shutdown, and the limits per tenant, per caller and per caller's groups.
 */
import { randomBytes } from 'node:crypto';
import type { Auth } from '../../core/entry-types.ts';
import { FwError, toFwError } from '../../core/errors.ts';
import { canonicalJson } from '../../core/canonical-json.ts';
import { admitEntry } from '../../entry/pipeline.ts';
import { checkResume } from '../log.ts';
import type { Access } from '../read-set.ts';
import { keptText } from '../sse-connection.ts';
import type { LiveConnection } from '../live-connection.ts';
import { errorEvent, eventHead } from '../live-wire.ts';
import type { SubscribeOutcome, SubscribeRequest } from './api.ts';
import type { HubContext } from './context.ts';
import type { FanOut } from './fan-out.ts';
import { groupKey, tenantKeyOf, type Group, type Groups, type Subscription } from './groups.ts';
import type { Scheduler } from './scheduling.ts';

export interface Subscriptions {
  readonly byId: ReadonlyMap<string, Subscription>;
  /** Every open stream (heartbeats, shutdown). */
  readonly connections: ReadonlySet<LiveConnection>;
  /** Admits and starts one subscription; resolves when its first event was sent or it failed. */
  subscribe(request: SubscribeRequest): Promise<SubscribeOutcome>;
  /** Tracks a stream for heartbeats and shutdown (subscriptions attach theirs too). */
  attach(connection: LiveConnection): void;
  /** Tells a multiplexed stream that its subscription `key` could not start. */
  refuse(connection: LiveConnection, key: string, error: FwError, traceId: string): void;
  /** Refuses (429 `too_many_subscriptions`, naming the limit) `count` more subscriptions past any limit. */
  checkCapacity(auth: Auth, count: number, clientAddress?: string, groupKey?: string): void;
  /** Ends the subscription's membership (its stream closed, or it failed): its group goes with its last member. */
  remove(subscription: Subscription): void;
}

export interface SubscriptionsOptions {
  groups: Groups;
  fanOut: FanOut;
  scheduler: Pick<Scheduler, 'schedule' | 'concerns'>;
  /** The log reader's revision (reader.ts). */
  readerRevision(): number;
}

export function createSubscriptions(context: HubContext, { groups, fanOut, scheduler, readerRevision }: SubscriptionsOptions): Subscriptions {
  const { db, limits } = context;
  const byId = new Map<string, Subscription>();
  const perTenant = new Map<string, number>();
  /** caller → group key → that caller's subscriptions in the group. */
  const perCaller = new Map<string, Map<string, number>>();
  const connections = new Set<LiveConnection>();

  function remove(subscription: Subscription): void {
    if (subscription.ended) return;
    subscription.ended = true;
    subscription.connection.subscriptions--;
    byId.delete(subscription.id);
    const { group } = subscription;
    const tenantKey = tenantKeyOf(subscription);
    const count = (perTenant.get(tenantKey) ?? 1) - 1;
    if (count > 0) perTenant.set(tenantKey, count);
    else perTenant.delete(tenantKey);
    const caller = callerKey(group.auth, subscription.clientAddress);
    const held = perCaller.get(caller);
    const inGroup = (held?.get(group.key) ?? 1) - 1;
    if (inGroup > 0) held!.set(group.key, inGroup);
    else held?.delete(group.key);
    if (held && held.size === 0) perCaller.delete(caller);
    group.subscribers.delete(subscription);
    if (group.subscribers.size === 0) groups.dispose(group);
  }

  async function start(subscription: Subscription, token: number | undefined): Promise<void> {
    const { group } = subscription;
    // What the client holds is its tenant's token for a revision (revision-codec.ts).
    const lastRevision = token === undefined ? undefined : fanOut.decode(subscription, token);
    if (lastRevision !== undefined) {
      // The read set decides, and it depends on the data: run the query first unless the group has a
      // result (a resume then costs a run, not a snapshot on the wire), and let a run in flight install
      // what it read. Deciding on a guess — the tables seen before — would also leave a group that was
      // never run deaf to writes.
      await ensureResult(group);
      if (group.runs.busy) await group.runs.idle();
      if (subscription.ended) return;
      const readSet = group.readSet ?? new Map<string, Access[]>();
      const revision = readerRevision();
      const runsBefore = group.runCount + group.received;
      // Only log rows that can touch what the group reads count (read-set.ts).
      const check = await checkResume(db.admin, { lastRevision, tables: [...readSet.keys()], tenantId: group.auth.tenantId, relevant: (row) => scheduler.concerns(group, readSet, row) });
      if (subscription.ended) return;
      // A run (or another process's result) that finished during the check was not sent to this (unstarted) subscription: send it now.
      if (check.kind === 'up-to-date' && !(group.json !== undefined && group.runCount + group.received !== runsBefore)) {
        subscription.started = true;
        subscription.sentRevision = Math.max(lastRevision, revision);
        fanOut.sendUpToDate(subscription, subscription.sentRevision);
        return;
      }
      if (check.kind === 'reset') {
        await ensureResult(group);
        if (subscription.ended) return;
        const message =
          check.reason === 'revision_expired'
            ? `Revision ${token} is older than the retained log; start again from this snapshot.`
            : `Revision ${token} is unknown to this database; start again from this snapshot.`;
        // Its own slot, queued before the snapshot: a snapshot must not replace it while unsent.
        fanOut.sendReset(subscription, check.reason, message, check.oldestRevision);
        subscription.started = true;
        fanOut.sendSnapshot(subscription);
        return;
      }
    }
    await ensureResult(group);
    if (subscription.ended) return;
    subscription.started = true;
    fanOut.sendSnapshot(subscription);
  }

  /** Makes sure the group has a result: joins the run in flight, or runs it. Throws the run's error. */
  async function ensureResult(group: Group): Promise<void> {
    while (group.json === undefined) {
      await (group.runs.busy ? group.runs.idle() : scheduler.schedule(group));
      if (group.json === undefined && group.lastError) throw group.lastError;
      // A closed group runs no more (the hub closed): waiting again would spin.
      if (group.disposed || group.runs.closed) return;
    }
  }

  async function subscribe(request: SubscribeRequest): Promise<SubscribeOutcome> {
    if (context.closed) return { ok: false, error: new FwError('unavailable', 'The live hub is shutting down.') };
    try {
      const { app } = context;
      if (!app) throw new FwError('unavailable', 'The app is not loaded yet.');
      const entry = app.entries.get(request.name);
      if (!entry || entry.kind !== 'liveQuery') {
        const known = [...app.entries].filter(([, e]) => e.kind === 'liveQuery').map(([n]) => n).sort();
        // The names are help in dev; in production they are the app's surface, not for whoever asks.
        throw new FwError('not_found', context.dev ? `No liveQuery named "${request.name}".` : 'No such liveQuery.', {
          diagnostics: [{ path: 'name', code: 'unknown_entry', message: context.dev ? `Known liveQueries: ${known.join(', ') || '(none)'}` : 'No such liveQuery.' }],
        });
      }
      const args = await admitEntry({ app, db }, entry, { name: request.name, auth: request.auth, traceId: request.traceId, args: request.args, external: true });
      await fanOut.ready;
      const key = groupKey(request.name, canonicalJson(request.args), request.auth);
      const caller = callerKey(request.auth, request.clientAddress);
      checkCapacity(request.auth, 1, request.clientAddress, key);
      const group = groups.open({ key, name: request.name, entry, args, rawArgs: request.args, auth: request.auth });
      const subscription: Subscription = {
        id: keptText(`sub_${randomBytes(9).toString('base64url')}`),
        key: request.key,
        connection: request.connection,
        group,
        createdAt: Date.now(),
        // A signed-in caller is counted by the group's identity (callerKey): no address kept.
        clientAddress: request.auth.userId ? undefined : request.clientAddress,
        exclusive: request.exclusive === true,
        sentSeq: -1,
        sentRevision: undefined,
        started: false,
        ended: false,
      };
      byId.set(subscription.id, subscription);
      const tenantKey = tenantKeyOf(subscription);
      perTenant.set(tenantKey, (perTenant.get(tenantKey) ?? 0) + 1);
      const held = perCaller.get(caller) ?? new Map<string, number>();
      held.set(key, (held.get(key) ?? 0) + 1);
      perCaller.set(caller, held);
      group.subscribers.add(subscription);
      request.connection.subscriptions++;
      attach(request.connection);
      request.connection.onClose(() => remove(subscription));
      try {
        await start(subscription, request.lastRevision);
      } catch (thrown) {
        remove(subscription);
        throw thrown;
      }
      return { ok: true, subscriptionId: subscription.id };
    } catch (thrown) {
      return { ok: false, error: toFwError(thrown) };
    }
  }

  function attach(connection: LiveConnection): void {
    if (connections.has(connection) || connection.isClosed) return;
    connections.add(connection);
    connection.onClose(() => connections.delete(connection));
  }

  /**
   * Refuses (429 `too_many_subscriptions`, naming the limit) `count` more subscriptions of a caller —
   * and, with `groupKey`, one in a group the caller does not hold yet — past any limit.
   */
  function checkCapacity(auth: Auth, count: number, clientAddress?: string, groupKey?: string): void {
    const held = perTenant.get(auth.tenantId ?? '') ?? 0;
    if (held + count > limits.maxSubscriptionsPerTenant) {
      throw tooMany('tenant', `This tenant holds ${held} live subscriptions in this process; the limit is ${limits.maxSubscriptionsPerTenant}.`, 'maxSubscriptionsPerTenant');
    }
    const caller = perCaller.get(callerKey(auth, clientAddress));
    const callerHeld = caller ? [...caller.values()].reduce((a, b) => a + b, 0) : 0;
    if (callerHeld + count > limits.maxSubscriptionsPerCaller) {
      throw tooMany('caller', `You hold ${callerHeld} live subscriptions in this process; the limit per ${auth.userId ? 'user' : 'client'} is ${limits.maxSubscriptionsPerCaller}.`, 'maxSubscriptionsPerCaller');
    }
    if (groupKey !== undefined && !caller?.has(groupKey) && (caller?.size ?? 0) >= limits.maxGroupsPerCaller) {
      throw tooMany('groups', `You keep ${caller!.size} distinct live queries (liveQuery × args) open in this process; the limit is ${limits.maxGroupsPerCaller}.`, 'maxGroupsPerCaller');
    }
  }

  return {
    byId,
    connections,
    subscribe,
    attach,
    refuse(connection, key, error, traceId) {
      connection.send(`key:${key}`, errorEvent(eventHead(null, key), error, traceId, true, context.dev));
      if (error.status >= 500) context.onError(error, traceId);
    },
    checkCapacity,
    remove,
  };
}

/** Whom the caller limits count: a signed-in user (in their tenant), or an anonymous client by address. */
function callerKey(auth: Auth, clientAddress: string | undefined): string {
  return auth.userId ? `user:${auth.tenantId ?? ''}:${auth.userId}` : `client:${clientAddress ?? 'unknown'}`;
}

function tooMany(limit: 'tenant' | 'caller' | 'groups', message: string, option: string): FwError {
  return new FwError('too_many_subscriptions', `${message} Close unused subscriptions.`, {
    diagnostics: [{ path: 'subscriptions', code: `limit_${limit}`, message, hint: `Close subscriptions you no longer render, or raise live.${option} (docs/live.md).` }],
  });
}
