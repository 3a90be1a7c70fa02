/**
 * The client's side of the live wire (docs/live.md), defined once in runtime/core/live-protocol.ts:
 * the `POST /live` request body, and the events of the stream read into typed values.
 */
import { errorStatus } from '../runtime/core/error-codes.ts';
import { liveEventNames, type LiveEventName } from '../runtime/core/live-protocol.ts';
import { type Diagnostic, FwError, type FwErrorCode } from './errors.ts';
import type { SseEvent } from './sse.ts';

export type { LiveRequestSubscription } from '../runtime/core/live-protocol.ts';

/** One event of a `POST /live` stream, addressed to the subscription `key`. */
export type LiveEvent =
  | { type: 'snapshot'; key: string; revision: number; covers: readonly number[]; result: unknown }
  | { type: 'up-to-date'; key: string; revision: number }
  | { type: 'reset'; key: string; reason: string; message: string }
  | { type: 'error'; key: string; fatal: boolean; error: FwError };

const knownEvents: ReadonlySet<string> = new Set(Object.values(liveEventNames));

function isLiveEventName(name: string | undefined): name is LiveEventName {
  return name !== undefined && knownEvents.has(name);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function malformed(event: SseEvent, problem: string): FwError {
  return new FwError({
    code: 'bad_response',
    status: 0,
    message: `The live stream sent a malformed "${event.event}" event (${problem}): ${event.data.slice(0, 120)}`,
  });
}

function revisionOf(event: SseEvent, data: Record<string, unknown>): number {
  if (typeof data.revision !== 'number' || !Number.isFinite(data.revision)) throw malformed(event, 'no numeric revision');
  return data.revision;
}

/** The revisions of the writes the result includes, when the runtime lists them (`[]` otherwise). */
function coversOf(event: SseEvent, data: Record<string, unknown>): readonly number[] {
  if (data.covers === undefined) return [];
  if (!Array.isArray(data.covers) || !data.covers.every((token) => typeof token === 'number' && Number.isFinite(token))) throw malformed(event, 'covers is not a list of revisions');
  return data.covers as number[];
}

function errorOf(data: Record<string, unknown>): FwError {
  const error = isRecord(data.error) ? data.error : {};
  const code = typeof error.code === 'string' ? error.code : 'internal';
  return new FwError({
    // A newer runtime may send a code this client does not list; it is passed on unchanged.
    code: code as FwErrorCode,
    message: typeof error.message === 'string' ? error.message : 'The live query failed.',
    status: (errorStatus as Partial<Record<string, number>>)[code] ?? 500,
    diagnostics: Array.isArray(error.diagnostics) ? (error.diagnostics as Diagnostic[]) : [],
    ...(typeof error.reason === 'string' ? { reason: error.reason } : {}),
    traceId: typeof data.traceId === 'string' ? data.traceId : undefined,
  });
}

/**
 * Reads one event of a `POST /live` stream. Returns undefined for events this client does not know
 * (a newer runtime may add some) and for events without a `key`; throws FwError `bad_response` for a
 * known event whose data is not what docs/live.md describes.
 *
 * @example
 *   const event = parseLiveEvent({ event: 'up-to-date', id: '42', data: '{"subscriptionId":"s","key":"k1","revision":42}' });
 *   // { type: 'up-to-date', key: 'k1', revision: 42 }
 */
export function parseLiveEvent(event: SseEvent): LiveEvent | undefined {
  const type = event.event;
  if (!isLiveEventName(type)) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    throw malformed(event, 'data is not JSON');
  }
  if (!isRecord(data)) throw malformed(event, 'data is not an object');
  if (typeof data.key !== 'string') return undefined;
  const { key } = data;
  switch (type) {
    case liveEventNames.snapshot:
      if (!('result' in data)) throw malformed(event, 'no result');
      return { type, key, revision: revisionOf(event, data), covers: coversOf(event, data), result: data.result };
    case liveEventNames.upToDate:
      return { type, key, revision: revisionOf(event, data) };
    case liveEventNames.reset:
      return { type, key, reason: String(data.reason ?? ''), message: String(data.message ?? '') };
    case liveEventNames.error:
      return { type, key, fatal: data.fatal === true, error: errorOf(data) };
  }
}
