import { type Clock, systemClock } from '../auth/clock.ts';
import type { SseConnection } from '../live/sse-connection.ts';

/** A subscription on a stream, as its events name it. */
export interface StreamSubscription {
  id: string;
  key?: string;
}

const expired = {
  code: 'unauthenticated',
  message: 'The access token expired; reconnect with a fresh token to resume.',
  diagnostics: [{ path: 'headers.authorization', code: 'token_expired', message: 'Reconnect with a fresh token (the client asks getToken again); subscriptions resume from their revision.' }],
};

/**
 * Ends a live stream when the credential it was opened with stops being accepted (`expiresAt`, epoch
 * ms): each subscription first gets an `error` event `unauthenticated` / `token_expired` with
 * `fatal: false` — nothing is wrong with the subscription, the client reconnects with a fresh token
 * and resumes it from its revision. `subscriptions` may still grow after this call (a multiplexed
 * stream admits its subscriptions after opening). `clock` is the one the token was checked by.
 */
export function endStreamAtExpiry(
  connection: SseConnection,
  expiresAt: number,
  traceId: string,
  subscriptions: readonly StreamSubscription[],
  clock: Clock = systemClock,
): void {
  const expire = () => {
    for (const { id, key } of subscriptions) {
      connection.send(`${id}:expired`, {
        event: 'error',
        data: JSON.stringify({ subscriptionId: id, ...(key === undefined ? {} : { key }), fatal: false, error: expired, traceId }),
      });
    }
    connection.end();
  };
  const cancel = clock.at(expiresAt, expire);
  connection.onClose(cancel);
}
