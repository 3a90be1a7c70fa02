/** The IPC messages between the orchestrator (`run.ts`) and a server process. */

/** What a server process did since its counters were last reset. */
export interface ServerStats {
  requests: number;
  /** Driver calls: network round trips on PostgreSQL, calls into the engine on PGlite. */
  databaseCalls: number;
  /** Statements sent to PostgreSQL (0 on PGlite), see instrument.ts. */
  databaseStatements: number;
  /** CPU time of the whole server process (user + system), in microseconds. */
  cpuUs: number;
  /** Share of wall time the event loop was busy (1 = saturated). */
  eventLoopUtilization: number;
  elapsedMs: number;
}

export type ParentMessage = { type: 'reset' } | { type: 'stats' } | { type: 'close' };

export type ChildMessage =
  | { type: 'ready'; port: number }
  | { type: 'failed'; message: string }
  | { type: 'reset' }
  | { type: 'stats'; stats: ServerStats };
