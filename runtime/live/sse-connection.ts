import type { IncomingMessage, ServerResponse } from 'node:http';
import { liveStreamRetryMs, sseCommentText, sseFrameText, type SseFrame } from '../core/live-protocol.ts';

/** One server-sent event; `data` is a single line of JSON (never contains a newline). */
export type SseEvent = SseFrame;

/**
 * An event already encoded, in parts that are shared: a snapshot's result goes to every subscriber of a
 * group, encoded once; only a small part (the subscription id) differs, and stays a string: a small
 * Buffer kept per subscription would be a slice of node's 8 KiB allocation pool, holding all of it.
 */
export interface PreparedEvent {
  parts: ReadonlyArray<Buffer | string>;
}

export function formatEvent(event: SseEvent): string {
  return sseFrameText(event);
}

type Chunk = string | PreparedEvent;

/**
 * `text` encoded in an allocation of its own, for parts kept as long as their frame is current: a
 * `Buffer.from` under 4 KiB would be a slice of node's shared 8 KiB pool and keep all of it alive.
 */
export function keptBytes(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  bytes.write(text);
  return bytes;
}

/** The parts as one buffer (a transient one: it is gone once written). */
function joined(parts: PreparedEvent['parts']): Buffer | string {
  if (parts.length === 1) return parts[0]!;
  let length = 0;
  for (const part of parts) length += typeof part === 'string' ? Buffer.byteLength(part) : part.length;
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  for (const part of parts) at += typeof part === 'string' ? out.write(part, at) : part.copy(out, at);
  return out;
}

/**
 * One open `text/event-stream` response, written with backpressure: while the socket is full, each
 * slot (a subscription) keeps only its latest unsent event, so a slow client never queues more than
 * the newest snapshot per subscription. Events may be sent before `open()`; they wait in their slots.
 */
export class SseConnection {
  readonly id: string;
  readonly openedAt = Date.now();
  #res: ServerResponse;
  #open = false;
  #closed = false;
  #blocked = false;
  #pending = new Map<string, Chunk>();
  #lastWriteAt = 0;
  #onClose: Array<() => void> = [];
  /** Events written and events replaced while the client was slow (for status and debug). */
  written = 0;
  superseded = 0;

  constructor(id: string, req: IncomingMessage, res: ServerResponse) {
    this.id = id;
    this.#res = res;
    // Detecting the client's disconnect ourselves: 'close' fires on the response when the socket goes.
    res.on('close', () => this.#markClosed());
    req.socket.setNoDelay(true);
    res.on('drain', () => this.#drain());
  }

  get isOpen(): boolean {
    return this.#open && !this.#closed;
  }
  get isClosed(): boolean {
    return this.#closed;
  }
  get isBlocked(): boolean {
    return this.#blocked;
  }
  get pendingSlots(): number {
    return this.#pending.size;
  }

  /** Writes the headers and the preamble, then whatever was sent before opening. */
  open(headers: Record<string, string>): void {
    if (this.#closed || this.#open) return;
    this.#open = true;
    this.#res.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
    });
    this.#write(PREAMBLE);
    this.#drain();
  }

  /** Sends an event in `slot`, replacing an unsent older event of the same slot. */
  send(slot: string, event: SseEvent | PreparedEvent): void {
    if (this.#closed) return;
    const text: Chunk = 'parts' in event ? event : formatEvent(event);
    if (!this.#open || this.#blocked) {
      if (this.#pending.delete(slot)) this.superseded++;
      this.#pending.set(slot, text);
      return;
    }
    this.#write(text);
    this.written++;
  }

  /** A comment line, if nothing else was written for `quietMs` (keeps proxies from timing out). */
  heartbeat(quietMs: number): void {
    if (!this.isOpen || this.#blocked || Date.now() - this.#lastWriteAt < quietMs) return;
    this.#write(HEARTBEAT);
  }

  onClose(listener: () => void): void {
    if (this.#closed) listener();
    else this.#onClose.push(listener);
  }

  /** Ends the stream (after what was already written); `finalText` (raw SSE, e.g. a `retry:` hint) goes last. */
  end(finalText?: string): void {
    if (this.#closed) return;
    if (this.#open) this.#res.end(finalText);
    this.#markClosed();
  }

  #write(text: Chunk): void {
    this.#lastWriteAt = Date.now();
    const socket = this.#res.socket;
    const corked = socket?.writableCorked ?? 1;
    // One buffer per event: copying the shared parts costs less than encoding their text again, and
    // one piece per write keeps the socket's writev short (measured: bench/live 1000×1).
    const ok = this.#res.write(typeof text === 'string' ? text : joined(text.parts));
    if (!ok) this.#blocked = true;
    // node:http corks the socket on a write and uncorks it on the next tick: a group's fan-out would
    // send nothing until the loop over its subscribers and everything after it in that turn had run.
    // Uncorking the cork this write made sends the event now, so the first subscribers get it first.
    if (corked === 0) socket!.uncork();
  }

  #drain(): void {
    this.#blocked = false;
    if (!this.isOpen) return;
    for (const [slot, text] of this.#pending) {
      this.#pending.delete(slot);
      this.#write(text);
      this.written++;
      if (this.#blocked) return;
    }
  }

  #markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#pending.clear();
    for (const listener of this.#onClose.splice(0)) listener();
  }
}

/** What every live stream starts with: a comment, and how soon a dropped client reconnects. */
const PREAMBLE = sseCommentText('fw live', liveStreamRetryMs);
const HEARTBEAT = sseCommentText('heartbeat');
