/**
 * The live wire (docs/live.md), defined once for both ends: the `POST /live` request body, the events
 * a live stream carries with their data, and how they are framed as server-sent events. The server
 * encodes every event through runtime/live/live-wire.ts; the client reads them in client/live-protocol.ts.
 * Types, constants and the text of SSE frames only (runtime/core is a leaf: it imports nothing else of fw).
 */
import type { PublicError } from './public-error.ts';

/** One subscription in the `POST /live` body. */
export interface LiveRequestSubscription {
  /** The client's name for it (1–64 characters, unique in the request); its events carry it. */
  key: string;
  name: string;
  args: unknown;
  /** The revision of the last snapshot received: unchanged subscriptions answer `up-to-date`. */
  lastRevision?: number;
}

/** The `POST /live` body. */
export interface LiveRequestBody {
  subscriptions: LiveRequestSubscription[];
}

/** The name of each event a live stream carries (the SSE `event:` field). */
export const liveEventNames = {
  snapshot: 'snapshot',
  upToDate: 'up-to-date',
  reset: 'reset',
  error: 'error',
} as const;

export type LiveEventName = (typeof liveEventNames)[keyof typeof liveEventNames];

/** Why a resume (`lastRevision`) cannot be honoured: a `reset` event, then a snapshot. */
export type LiveResetReason = 'revision_expired' | 'revision_unknown';

/** What starts every event's data: the subscription (null: it never started) and the client's key, if it gave one. */
export interface LiveEventHead {
  subscriptionId: string | null;
  key?: string;
}

/** The data of each live event, by name (one line of JSON). A snapshot's SSE `id` is its revision. */
export interface LiveEventData {
  snapshot: LiveEventHead & { revision: number; result: unknown };
  'up-to-date': LiveEventHead & { revision: number };
  reset: LiveEventHead & { reason: LiveResetReason; message: string; oldestRevision: number };
  /** `fatal`: the subscription gets no more events. `error` is redacted (public-error.ts). */
  error: LiveEventHead & { fatal: boolean; error: PublicError; traceId: string };
}

/** One server-sent event as the runtime writes it: `data` is a single line of JSON (never a newline). */
export interface SseFrame {
  event: string;
  id?: number | string;
  data: string;
}

/** The text of one server-sent event. */
export function sseFrameText({ event, id, data }: SseFrame): string {
  return `${sseFramePrefix(event, id)}${data}${sseFrameEnd}`;
}

/** The part of an event's text before its data (`event:` and `id:` lines, then `data: `). */
export function sseFramePrefix(event: string, id?: number | string): string {
  return `event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}data: `;
}

/** The end of every event's text, after its data. */
export const sseFrameEnd = '\n\n';

/** A comment (clients ignore it; it keeps proxies from timing the stream out), with a `retry:` hint when given. */
export function sseCommentText(comment: string, retryMs?: number): string {
  return `: ${comment}\n${retryMs === undefined ? '' : `retry: ${retryMs}\n`}\n`;
}

/** What a live stream starts with: the client reconnects after this many ms if it drops. */
export const liveStreamRetryMs = 1000;
/** The reconnection delay a stream ended by a graceful shutdown asks for (another process answers). */
export const liveShutdownRetryMs = 250;
