import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { readEnvelope } from './envelope.ts';
import { FwError } from './errors.ts';

/** One server-sent event: `data` (lines joined with `\n`), and `id` / `event` when the server set them. */
export type SseEvent = EventSourceMessage;

export interface ReadEventStreamOptions {
  onEvent(event: SseEvent): void;
  /** Comment lines, e.g. the runtime's heartbeats (without the colon and one following space). */
  onComment?(comment: string): void;
  /** The server's `retry:` reconnection delay in milliseconds. */
  onRetry?(milliseconds: number): void;
  /** Stops reading; the returned promise then resolves. */
  signal?: AbortSignal;
}

/**
 * Reads a `text/event-stream` response over fetch streaming (EventSource cannot send auth headers).
 * Resolves when the stream ends or `signal` aborts. A response that is not an event stream rejects
 * with its FwError (the runtime's envelope, or `bad_response`); a connection lost mid-stream rejects
 * with `network_error`.
 *
 * @example
 *   const response = await fetch(`${apiUrl}/live/listNotes?args=%7B%7D`, { headers, signal });
 *   await readEventStream(response, { signal, onEvent: (event) => apply(JSON.parse(event.data)) });
 */
export async function readEventStream(response: Response, options: ReadEventStreamOptions): Promise<void> {
  const { signal } = options;
  const contentType = response.headers.get('content-type') ?? '';
  if (!response.ok || !/^text\/event-stream\b/i.test(contentType) || !response.body) {
    await readEnvelope(response);
    throw new FwError({
      code: 'bad_response',
      status: response.status,
      message: `Expected an event stream from ${response.url || 'the runtime'}, got ${contentType || 'no content type'}.`,
    });
  }
  const parser = createParser({
    onEvent: (event) => {
      if (!signal?.aborted) options.onEvent(event);
    },
    onComment: options.onComment,
    onRetry: options.onRetry,
  });
  const reader = response.body.getReader();
  const stop = () => void reader.cancel().catch(() => {});
  signal?.addEventListener('abort', stop, { once: true });
  // One decoder for the whole stream: a UTF-8 character may be split across chunks.
  const decoder = new TextDecoder();
  try {
    while (!signal?.aborted) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (thrown) {
        if (signal?.aborted) return;
        throw new FwError({
          code: 'network_error',
          status: 0,
          message: `The event stream from ${response.url || 'the runtime'} broke off: ${thrown instanceof Error ? thrown.message : String(thrown)}`,
          cause: thrown,
        });
      }
      if (chunk.done) {
        parser.feed(decoder.decode());
        return;
      }
      parser.feed(decoder.decode(chunk.value, { stream: true }));
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    // Releases the connection when we stop early (abort, or a callback threw).
    stop();
  }
}
