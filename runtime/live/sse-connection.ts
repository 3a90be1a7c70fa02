import type { IncomingMessage, ServerResponse } from 'node:http';
import { liveStreamRetryMs, sseCommentText, sseFrameText, type SseFrame } from '../core/live-protocol.ts';
import type { LiveConnection, PreparedEvent } from './live-connection.ts';

/** One server-sent event; `data` is a single line of JSON (never contains a newline). */
export type SseEvent = SseFrame;

export type { PreparedEvent };

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

/**
 * `text`, flattened: a string built by concatenation is a tree of its pieces in V8 (32 bytes a node,
 * plus every piece), until something reads its content as a whole. A string kept for a stream's life
 * (ids, heads) is flattened once into one; measuring its UTF-8 length is such a read.
 */
export function keptText(text: string): string {
  Buffer.byteLength(text);
  return text;
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
export class SseConnection implements LiveConnection {
  readonly id: string;
  readonly openedAt = Date.now();
  #res: ServerResponse;
  #open = false;
  #closed = false;
  #blocked = false;
  /** Holds taken (`hold`): while any is, events wait in their slots and go out together on release. */
  #holds = 0;
  /** Unsent events by slot, made when the first event has to wait (most streams never need it). */
  #pending: Map<string, Chunk> | undefined;
  #lastWriteAt = 0;
  #onClose: Array<() => void> = [];
  /** Events written and events replaced while the client was slow (for status and debug). */
  written = 0;
  superseded = 0;
  /** The live subscriptions this stream carries (the hub counts them): one write can wake two of them only past 1. */
  subscriptions = 0;

  // The response's listeners are shared functions that find their connection on the response: a
  // closure per stream (two, with their contexts) is memory every idle subscriber keeps (bench/live).
  static #onResponseClose(this: ServerResponse): void {
    (this as StreamResponse)[CONNECTION]!.#markClosed();
  }
  static #onResponseDrain(this: ServerResponse): void {
    (this as StreamResponse)[CONNECTION]!.#drain();
  }

  constructor(id: string, req: IncomingMessage, res: ServerResponse) {
    this.id = id;
    this.#res = res;
    (res as StreamResponse)[CONNECTION] = this;
    // Detecting the client's disconnect ourselves: 'close' fires on the response when the socket goes.
    res.on('close', SseConnection.#onResponseClose);
    req.socket.setNoDelay(true);
    res.on('drain', SseConnection.#onResponseDrain);
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
    return this.#pending?.size ?? 0;
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
    // node:http keeps the rendered head on the response for as long as it lives, as the tree of
    // strings it was concatenated from (~1 KB for these lines), memory every idle stream keeps
    // (bench/live). Flattened, it is one ~300-byte string. Only a read of node's field.
    const head = (this.#res as { _header?: unknown })._header;
    if (typeof head === 'string') keptText(head);
    this.#write(PREAMBLE);
    this.#drain();
  }

  /** Sends an event in `slot`, replacing an unsent older event of the same slot. */
  send(slot: string, event: SseEvent | PreparedEvent): void {
    if (this.#closed) return;
    const text: Chunk = 'parts' in event ? event : formatEvent(event);
    if (!this.#open || this.#blocked || this.#holds > 0) {
      this.#pending ??= new Map();
      if (this.#pending.delete(slot)) this.superseded++;
      this.#pending.set(slot, text);
      return;
    }
    this.#write(text);
    this.written++;
  }

  /**
   * Holds what is sent until every hold is released (the function returned; calling it again does
   * nothing), then writes it in one piece: the frames one write causes on several subscriptions of this
   * stream (a row moving from one page to the next) reach the client together, and it never shows the
   * state between them.
   */
  hold(): () => void {
    this.#holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // A slow client's socket still full: its 'drain' writes what waits, as it would without a hold.
      if (--this.#holds > 0 || this.#blocked) return;
      const socket = this.#res.socket;
      socket?.cork();
      try {
        this.#drain();
      } finally {
        socket?.uncork();
      }
    };
  }

  /** A comment line, if nothing else was written for `quietMs` (keeps proxies from timing out). */
  heartbeat(quietMs: number): void {
    if (!this.isOpen || this.#blocked || this.#holds > 0 || Date.now() - this.#lastWriteAt < quietMs) return;
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
    if (!this.isOpen || !this.#pending || this.#holds > 0) return;
    for (const [slot, text] of this.#pending) {
      this.#pending.delete(slot);
      this.#write(text);
      this.written++;
      if (this.#blocked) return;
    }
    this.#pending = undefined;
  }

  #markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#pending = undefined;
    for (const listener of this.#onClose.splice(0)) listener();
  }
}

const CONNECTION = Symbol('fw.sseConnection');
type StreamResponse = ServerResponse & { [CONNECTION]?: SseConnection };

/** What every live stream starts with: a comment, and how soon a dropped client reconnects. */
const PREAMBLE = sseCommentText('fw live', liveStreamRetryMs);
const HEARTBEAT = sseCommentText('heartbeat');
