/**
 * What the hub sends a subscription — snapshots, `up-to-date`, `reset` and errors, all encoded by
 * live-wire.ts — with revisions as tokens of the subscription's tenant (revision-codec.ts).
 */
import type { FwError } from '../../core/errors.ts';
import { databaseSecret } from '../../db/secrets.ts';
import { createRevisionCodec, type RevisionCodec } from '../revision-codec.ts';
import { errorEvent, eventHead, resetEvent, snapshotParts, upToDateEvent } from '../live-wire.ts';
import { keptText } from '../sse-connection.ts';
import type { LiveResetReason } from '../../core/live-protocol.ts';
import type { HubContext } from './context.ts';
import { tenantKeyOf, type Subscription } from './groups.ts';

export interface FanOut {
  /** Settles when the revision codec's key is loaded (rejects if it cannot be). */
  readonly ready: Promise<unknown>;
  /** The revision a client holds as its token (`lastRevision`), as this subscription's tenant sees it. */
  decode(subscription: Subscription, token: number): number | undefined;
  /** The group's current result, to one subscription (it then holds the group's seq and revision). */
  sendSnapshot(subscription: Subscription): void;
  sendUpToDate(subscription: Subscription, revision: number): void;
  /** The client's revision cannot be resumed from: in its own slot, so the snapshot after it cannot replace it while unsent. */
  sendReset(subscription: Subscription, reason: LiveResetReason, message: string, oldestRevision: number): void;
  sendError(subscription: Subscription, error: FwError, traceId: string, fatal: boolean): void;
  /** A revision as a tenant's streams show it (its subscriptions' `tenantKey`: the tenant id, or '' for none). */
  token(tenantKey: string, revision: number): number;
}

export function createFanOut(context: HubContext): FanOut {
  let codec: RevisionCodec | undefined;
  const ready = databaseSecret(context.db.admin, 'live.revision').then((key) => (codec = createRevisionCodec(key)));
  ready.catch(() => undefined); // reported by the subscribe that awaits it
  /** The revision as this subscription's tenant sees it (revision-codec.ts). */
  const visible = (subscription: Subscription, revision: number) => codec!.encode(revision, tenantKeyOf(subscription));

  function head(subscription: Subscription): string {
    return (subscription.headText ??= keptText(eventHead(subscription.id, subscription.key)));
  }

  return {
    ready,
    decode: (subscription, token) => codec!.decode(token, tenantKeyOf(subscription)),
    token: (tenantKey, revision) => codec!.encode(revision, tenantKey),
    sendSnapshot(subscription) {
      const { group } = subscription;
      subscription.sentSeq = group.seq;
      subscription.sentRevision = group.revision;
      context.counters.snapshotsSent++;
      // The result is serialised and encoded once per run and revision (every subscriber of a group has
      // its tenant, so its revision token); only the small head differs between subscribers.
      let frame = group.frame;
      if (!frame || frame.seq !== group.seq || frame.revision !== group.revision) {
        const token = visible(subscription, group.revision);
        const covers = group.covers.map((revision) => visible(subscription, revision));
        frame = group.frame = { seq: group.seq, revision: group.revision, ...snapshotParts(token, group.json!, covers) };
      }
      subscription.connection.send(subscription.id, { parts: [frame.prefix, head(subscription), frame.tail] });
    },
    sendUpToDate(subscription, revision) {
      subscription.connection.send(subscription.id, upToDateEvent(head(subscription), visible(subscription, revision)));
    },
    sendReset(subscription, reason, message, oldestRevision) {
      subscription.connection.send(`${subscription.id}:reset`, resetEvent(head(subscription), reason, message, visible(subscription, oldestRevision)));
    },
    sendError(subscription, error, traceId, fatal) {
      subscription.connection.send(subscription.id, errorEvent(head(subscription), error, traceId, fatal, context.dev));
      // The error takes the subscription's slot (a snapshot still queued there is dropped), and a client
      // shows it until data comes: the next good run sends the snapshot again, changed or not.
      if (!fatal) subscription.sentSeq = -1;
    },
  };
}
