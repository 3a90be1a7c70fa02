import { type Clock, systemClock } from '../core/clock.ts';
import { FwError } from '../core/errors.ts';
import { errorEvent, eventHead } from '../live/live-wire.ts';
import type { SseConnection } from '../live/sse-connection.ts';

/** A subscription on a stream, as its events name it. */
export interface StreamSubscription {
  id: string;
  key?: string;
}

const expired = new FwError('unauthenticated', 'The access token expired; reconnect with a fresh token to resume.', {
  diagnostics: [{ path: 'headers.authorization', code: 'token_expired', message: 'Reconnect with a fresh token (the client asks getToken again); subscriptions resume from their revision.' }],
});

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
      // A 401 describes the caller's own request: the same event in dev and production.
      connection.send(`${id}:expired`, errorEvent(eventHead(id, key), expired, traceId, false, false));
    }
    connection.end();
  };
  const cancel = clock.at(expiresAt, expire);
  connection.onClose(cancel);
}
