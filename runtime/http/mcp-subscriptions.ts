/**
 * An MCP session's resource subscriptions (`resources/subscribe`, docs/mcp.md): each is a live-hub
 * subscription of the liveQuery as the caller who subscribed, so `notifications/resources/updated`
 * follows the hub's own invalidation — sent when a write changed the result the caller would read,
 * and not for a write that leaves it as it was, nor for another tenant's (notifying-connection.ts).
 * The notification names the resource only; the client reads it again, as itself.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../core/clock.ts';
import type { Auth } from '../core/entry-types.ts';
import { FwError } from '../core/errors.ts';
import type { LiveHub } from '../live/hub.ts';
import { NotifyingConnection } from '../live/notifying-connection.ts';

export interface ResourceSubscriptions {
  /** Subscribes `uri` (liveQuery `name` with `args`) as `caller`; already subscribed is success. Throws the hub's refusal. */
  subscribe(uri: string, request: { name: string; args: unknown; caller: Auth; expiresAt?: number | undefined; traceId: string; clientAddress: () => string }): Promise<void>;
  unsubscribe(uri: string): void;
  /** Ends them all (the session closed). */
  close(): void;
}

export function createResourceSubscriptions(hub: LiveHub, clock: Clock, notify: (uri: string) => void): ResourceSubscriptions {
  const byUri = new Map<string, NotifyingConnection>();

  return {
    async subscribe(uri, request) {
      if (byUri.has(uri)) return;
      // A session is one client's channel, as a stream is: it carries as many as one stream may.
      const limit = hub.limits.maxSubscriptionsPerConnection;
      if (byUri.size >= limit) {
        throw new FwError('too_many_subscriptions', `This session holds ${byUri.size} subscriptions; the limit is ${limit}.`, {
          diagnostics: [{ path: 'params.uri', code: 'too_many', message: `Unsubscribe from one first (at most ${limit} a session).` }],
        });
      }
      const connection = new NotifyingConnection(`mcp_${randomBytes(6).toString('base64url')}`, () => notify(uri));
      const outcome = await hub.subscribe({
        connection,
        name: request.name,
        args: request.args,
        auth: request.caller,
        traceId: request.traceId,
        clientAddress: request.caller.userId ? undefined : request.clientAddress(),
      });
      if (!outcome.ok) {
        connection.end();
        throw outcome.error;
      }
      // Two concurrent subscribes of one URI: the first kept wins.
      if (byUri.has(uri)) return connection.end();
      byUri.set(uri, connection);
      connection.onClose(() => {
        if (byUri.get(uri) === connection) byUri.delete(uri);
      });
      // The credential it was made with stops being accepted: so does the subscription (as a live stream's, live-expiry.ts).
      if (request.expiresAt !== undefined) connection.onClose(clock.at(request.expiresAt, () => connection.end()));
    },
    unsubscribe(uri) {
      byUri.get(uri)?.end();
    },
    close() {
      for (const connection of [...byUri.values()]) connection.end();
    },
  };
}
