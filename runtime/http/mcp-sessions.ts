/**
 * MCP sessions (`Mcp-Session-Id`, Streamable HTTP): what a client that initialized keeps between its
 * requests — one SDK server and transport, reused for every request instead of built per request, and
 * its resource subscriptions (mcp-subscriptions.ts). In memory, in this process.
 *
 * A session belongs to the caller that opened it: its id is looked up together with the caller of the
 * request that presents it, and another caller's request (another user, tenant, or anonymous address)
 * finds nothing — the same 404 as an id that never existed, so an id seen in a log opens nothing and
 * tells nothing. Each request is still authenticated on its own; the session only holds state.
 *
 * Sessions that see no request for {@link SESSION_IDLE_MS} are closed (checked as requests arrive, at
 * most once a minute), and a caller holds at most {@link SESSIONS_PER_CALLER} (its oldest is closed).
 */
import type { Auth } from '../core/entry-types.ts';

export const SESSION_IDLE_MS = 30 * 60_000;
export const SESSIONS_PER_CALLER = 32;
const SWEEP_EVERY_MS = 60_000;

/** What a session holds beside its id; `close` ends its subscriptions and its transport. */
export interface McpSessionState {
  close(): Promise<void>;
}

interface Held<S> {
  owner: string;
  state: S;
  lastUsed: number;
  /** Requests of it still open (a GET stream stays open): a session in use is never idle. */
  open: number;
}

/** Who a session belongs to: a signed-in caller by its verified identity, an anonymous one by its address. */
export function sessionOwner(auth: Auth, clientAddress: () => string): string {
  return auth.kind === 'anonymous' ? `address:${clientAddress()}` : JSON.stringify([auth.kind, auth.tenantId, auth.userId]);
}

export interface McpSessions<S extends McpSessionState> {
  add(id: string, owner: string, state: S): void;
  /** The session `id` if `owner` opened it, else undefined (unknown and not-yours look alike). */
  find(id: string, owner: string): S | undefined;
  /** Counts a request of session `id` as open until `done` is called. */
  use(id: string): () => void;
  /** Forgets session `id` (its transport closed). */
  remove(id: string): void;
  readonly size: number;
}

export function createMcpSessions<S extends McpSessionState>(now: () => number): McpSessions<S> {
  const sessions = new Map<string, Held<S>>();
  let lastSweep = now();

  const close = (id: string) => {
    const held = sessions.get(id);
    if (!held) return;
    sessions.delete(id);
    void held.state.close().catch(() => {});
  };

  function sweep(): void {
    const at = now();
    if (at - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = at;
    for (const [id, held] of sessions) if (held.open === 0 && at - held.lastUsed > SESSION_IDLE_MS) close(id);
  }

  return {
    add(id, owner, state) {
      sweep();
      const mine = [...sessions].filter(([, held]) => held.owner === owner);
      // Map order is creation order: the first are the oldest.
      for (const [oldId] of mine.slice(0, Math.max(0, mine.length - SESSIONS_PER_CALLER + 1))) close(oldId);
      sessions.set(id, { owner, state, lastUsed: now(), open: 0 });
    },
    find(id, owner) {
      sweep();
      const held = sessions.get(id);
      return held && held.owner === owner ? held.state : undefined;
    },
    use(id) {
      const held = sessions.get(id);
      if (!held) return () => {};
      held.open++;
      held.lastUsed = now();
      let done = false;
      return () => {
        if (done) return;
        done = true;
        held.open--;
        held.lastUsed = now();
      };
    },
    remove(id) {
      sessions.delete(id);
    },
    get size() {
      return sessions.size;
    },
  };
}
