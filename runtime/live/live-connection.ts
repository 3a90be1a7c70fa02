import type { SseFrame } from '../core/live-protocol.ts';

/**
 * An event already encoded, in parts that are shared: a snapshot's result goes to every subscriber of a
 * group, encoded once; only a small part (the subscription id) differs, and stays a string: a small
 * Buffer kept per subscription would be a slice of node's 8 KiB allocation pool, holding all of it.
 */
export interface PreparedEvent {
  parts: ReadonlyArray<Buffer | string>;
}

/**
 * Where the hub sends a subscription's events: an HTTP stream (SseConnection), or anything else that
 * carries them on (an MCP session's subscription, notifying-connection.ts). What the hub needs of it
 * and nothing more, so a subscription's consumer is not tied to one transport.
 */
export interface LiveConnection {
  readonly id: string;
  readonly isClosed: boolean;
  readonly isBlocked: boolean;
  readonly pendingSlots: number;
  /** Events written and events replaced while the client was slow (status and debug). */
  readonly written: number;
  readonly superseded: number;
  /** The live subscriptions it carries (the hub counts them). */
  subscriptions: number;
  /** Sends an event in `slot`, replacing an unsent older event of the same slot. */
  send(slot: string, event: SseFrame | PreparedEvent): void;
  /** Holds what is sent until the returned release, so one write's frames arrive together. */
  hold(): () => void;
  /** Keeps a quiet transport open (a comment after `quietMs` of silence, for streams). */
  heartbeat(quietMs: number): void;
  onClose(listener: () => void): void;
  end(finalText?: string): void;
}
