import { liveEventNames, type SseFrame } from '../core/live-protocol.ts';
import type { LiveConnection, PreparedEvent } from './live-connection.ts';

/**
 * A live subscription whose consumer wants to know *that* its result changed, not the result: an MCP
 * `resources/subscribe` (mcp-subscriptions.ts), told `notifications/resources/updated` and reading the
 * resource again. The hub sends a snapshot only when a run's result differs from the last one sent
 * (reruns.ts), so every snapshot after the first is a change; an error is one too (a read now fails).
 * The first snapshot is the result as of subscribing, which the subscriber already asked for.
 * Carries one subscription, writes no bytes, and is never slow.
 */
export class NotifyingConnection implements LiveConnection {
  readonly id: string;
  readonly isBlocked = false;
  readonly pendingSlots = 0;
  readonly superseded = 0;
  written = 0;
  subscriptions = 0;
  #changed: () => void;
  #closed = false;
  #onClose: Array<() => void> = [];

  constructor(id: string, changed: () => void) {
    this.id = id;
    this.#changed = changed;
  }

  get isClosed(): boolean {
    return this.#closed;
  }

  send(_slot: string, event: SseFrame | PreparedEvent): void {
    if (this.#closed) return;
    const change = 'parts' in event || event.event === liveEventNames.error;
    if (!change) return;
    if (this.written++ > 0) this.#changed();
  }

  hold(): () => void {
    return () => {};
  }

  heartbeat(): void {}

  onClose(listener: () => void): void {
    if (this.#closed) listener();
    else this.#onClose.push(listener);
  }

  end(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const listener of this.#onClose.splice(0)) listener();
  }
}
