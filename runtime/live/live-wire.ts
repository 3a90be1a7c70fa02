/**
 * The server's side of the live wire format (docs/live.md), whose names, shapes and framing are
 * defined once in runtime/core/live-protocol.ts (the client reads them through client/live-protocol.ts).
 * Every event a live stream carries is written here: `snapshot`, `up-to-date`, `reset` and `error`,
 * on `GET /live/:name` and `POST /live` alike. An error goes through the same public-error redaction
 * as an HTTP answer (public-error.ts): outside dev mode a 5xx says its code and the trace id, never its
 * message, diagnostics or stack; whoever sends one logs the rest under that trace id.
 *
 * Events addressed to a subscription start with its head, `{"subscriptionId":…,"key":…`, which the
 * hub keeps per subscription as a string; a snapshot's result is encoded once per group run and shared
 * by every subscriber (`snapshotParts`).
 */
import type { FwError } from '../core/errors.ts';
import { publicError } from '../core/public-error.ts';
import { keptBytes, type SseEvent } from './sse-connection.ts';
import { liveEventNames, liveShutdownRetryMs, sseCommentText, sseFrameEnd, sseFramePrefix, type LiveResetReason } from '../core/live-protocol.ts';

/** The start of every event's data for one subscription (`subscriptionId` null: it never started). */
export function eventHead(subscriptionId: string | null, key: string | undefined): string {
  return `{"subscriptionId":${JSON.stringify(subscriptionId)}${key === undefined ? '' : `,"key":${JSON.stringify(key)}`}`;
}

/**
 * A snapshot of `resultJson` at revision token `token`, in the two parts every subscriber shares:
 * the event is `prefix + head + tail` (sse-connection.ts, PreparedEvent). `covers`: tokens of the
 * writes that woke the run which made it (the result includes them), when any did.
 */
export function snapshotParts(token: number, resultJson: string, covers: readonly number[] = []): { prefix: Buffer; tail: Buffer } {
  return {
    prefix: keptBytes(sseFramePrefix(liveEventNames.snapshot, token)),
    tail: keptBytes(`,"revision":${token}${coversText(covers)},"result":${resultJson}}${sseFrameEnd}`),
  };
}

/** Nothing changed since the revision the client resumed from. */
export function upToDateEvent(head: string, token: number): SseEvent {
  return { event: liveEventNames.upToDate, id: token, data: `${head},"revision":${token}}` };
}

const coversText = (covers: readonly number[]) => (covers.length === 0 ? '' : `,"covers":[${covers.join(',')}]`);

/** The client's revision cannot be resumed from; a snapshot follows. */
export function resetEvent(head: string, reason: LiveResetReason, message: string, oldestToken: number): SseEvent {
  return { event: liveEventNames.reset, data: `${head},"reason":"${reason}","message":${JSON.stringify(message)},"oldestRevision":${oldestToken}}` };
}

/**
 * An error for one subscription: `fatal` when it will get no more events. Redacted as HTTP answers are
 * (`dev` shows everything): the caller learns the code and the trace id of a server failure, never its text.
 */
export function errorEvent(head: string, error: FwError, traceId: string, fatal: boolean, dev: boolean): SseEvent {
  return { event: liveEventNames.error, data: `${head},"fatal":${fatal},"error":${JSON.stringify(publicError(error, traceId, dev))},"traceId":${JSON.stringify(traceId)}}` };
}

/**
 * What ends every stream at a graceful shutdown: a comment and a short `retry:`, so clients reconnect,
 * through the load balancer, to another process.
 */
export function shutdownText(retryMs: number = liveShutdownRetryMs): string {
  return sseCommentText('fw shutting down, reconnect', retryMs);
}
