import { format } from 'node:util';
import { activeTraceId } from './trace-notes.ts';

/**
 * The last log lines of this process, for the dashboard's Logs view: what fw and the app's handlers
 * print through `console` (fw's own lines name their request as `trace <id>`, which the view links
 * to the request; a line printed while traced work runs — a handler's `console.log` — belongs to that
 * work's trace too), and one line per failed execution, which fw dev notes here without printing
 * (a 4xx answer is the caller's business, not the terminal's). Only `fw dev` turns it on, and it keeps
 * RECENT_LOGS lines: `fw start` logs as before, with nothing kept.
 */
export const RECENT_LOGS = 500;
const MAX_LINE = 4000;

export interface LogLine {
  seq: number;
  /** Milliseconds since the epoch. */
  at: number;
  level: 'log' | 'info' | 'warn' | 'error' | 'debug';
  text: string;
  /** The trace the line names (`trace <id>`), else the one running when it was printed. */
  traceId: string | null;
  /** The trace running when it was printed, when the line names another (a delivery's line names the request that emitted it). */
  runningTraceId?: string;
  /** A failed execution (an answer of 4xx or 5xx, a delivery that failed), noted by fw. */
  failure?: true;
}

const lines: LogLine[] = [];
let seq = 0;
let installed: (() => void) | undefined;

/** Records what `console` prints (it still prints); returns the undo. Installing twice keeps one recorder. */
export function keepRecentLogs(): () => void {
  if (installed) return () => {};
  const levels = ['log', 'info', 'warn', 'error', 'debug'] as const;
  const originals = levels.map((level) => [level, console[level]] as const);
  for (const [level, original] of originals) {
    console[level] = (...args: unknown[]) => {
      record(level, args);
      original.apply(console, args);
    };
  }
  installed = () => {
    for (const [level, original] of originals) console[level] = original;
    installed = undefined;
  };
  return installed;
}

function record(level: LogLine['level'], args: unknown[]): void {
  try {
    keep(level, format(...args));
  } catch {
    // A value that cannot be formatted is not worth failing the caller's log call for.
  }
}

function keep(level: LogLine['level'], text: string, extra: Pick<LogLine, 'failure'> = {}): void {
  const named = /\btrace ([0-9a-f]{32})\b/i.exec(text)?.[1] ?? /"traceId":"([0-9a-f]{16,32})"/i.exec(text)?.[1];
  const running = activeTraceId();
  lines.push({
    seq: ++seq,
    at: Date.now(),
    level,
    text: text.length > MAX_LINE ? `${text.slice(0, MAX_LINE)}…` : text,
    traceId: named ?? running ?? null,
    ...(running && named && running !== named ? { runningTraceId: running } : {}),
    ...extra,
  });
  if (lines.length > RECENT_LOGS) lines.splice(0, lines.length - RECENT_LOGS);
}

/**
 * One line for a failed execution — what ran, how it ended, how long, its trace: `POST /commands/x →
 * 403 forbidden in 2 ms: Policy "admin" does not allow this caller. [trace …]`. Kept for the Logs view
 * (while fw dev keeps lines), not printed.
 */
export function noteFailedExecution(failure: { what: string; outcome: string; level: 'warn' | 'error'; durationMs: number; message: string; traceId: string }): void {
  if (!installed) return;
  const message = failure.message.length > 300 ? `${failure.message.slice(0, 300)}…` : failure.message;
  keep(failure.level, `fw: ${failure.what} → ${failure.outcome} in ${Math.round(failure.durationMs)} ms: ${message} [trace ${failure.traceId}]`, { failure: true });
}

/** The kept lines after `since` (a `seq`), oldest first. */
export function recentLogs(since = 0): LogLine[] {
  return lines.filter((line) => line.seq > since);
}

/** The kept lines of one trace: those that name it, and those printed while it ran. */
export function logsOfTrace(traceId: string): LogLine[] {
  return lines.filter((line) => line.traceId === traceId || line.runningTraceId === traceId);
}
