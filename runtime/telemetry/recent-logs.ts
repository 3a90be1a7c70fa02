import { format } from 'node:util';

/**
 * The last log lines of this process, for the dashboard's Logs view: what fw and the app's handlers
 * print through `console` (fw's own lines name their request as `trace <id>`, which the view links
 * to the request). Only `fw dev` turns it on, and it keeps RECENT_LOGS lines: `fw start` logs as
 * before, with nothing kept.
 */
export const RECENT_LOGS = 500;
const MAX_LINE = 4000;

export interface LogLine {
  seq: number;
  /** Milliseconds since the epoch. */
  at: number;
  level: 'log' | 'info' | 'warn' | 'error' | 'debug';
  text: string;
  traceId: string | null;
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
    const text = format(...args);
    const traceId = /\btrace ([0-9a-f]{32})\b/i.exec(text)?.[1] ?? /"traceId":"([0-9a-f]{16,32})"/i.exec(text)?.[1] ?? null;
    lines.push({ seq: ++seq, at: Date.now(), level, text: text.length > MAX_LINE ? `${text.slice(0, MAX_LINE)}…` : text, traceId });
    if (lines.length > RECENT_LOGS) lines.splice(0, lines.length - RECENT_LOGS);
  } catch {
    // A value that cannot be formatted is not worth failing the caller's log call for.
  }
}

/** The kept lines after `since` (a `seq`), oldest first. */
export function recentLogs(since = 0): LogLine[] {
  return lines.filter((line) => line.seq > since);
}
