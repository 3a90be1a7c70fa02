import type { SeverityDiagnostic } from './failure-diagnostics.ts';

/** Something generation noticed: `path` is `file` or `file:line:column`, relative to the app root. */
export interface GenerateDiagnostic {
  severity: 'warning' | 'info';
  code: 'dynamic_table' | 'raw_sql' | 'helper_call' | 'parse_error' | 'unknown_table' | 'query_writes' | 'args_schema_unavailable';
  path: string;
  message: string;
}

/**
 * A finding of fw's static checks (frontend contract, boundaries, policies, drift), located to the
 * character. It is a `SeverityDiagnostic` (so reports that list diagnostics take it as is; `path` is
 * `file:line:column`), plus the parts an editor or agent acts on: the location split out, a fix hint
 * and a command that repairs or explains it.
 */
export interface CheckDiagnostic extends SeverityDiagnostic {
  code: CheckCode;
  /** App-relative, `/`-separated. */
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based, in UTF-16 code units. */
  column: number;
  hint: string;
  /** A command that fixes or explains the problem, e.g. `fw do connect-ui`. */
  suggestedCommand: string;
}

/** The stable codes (documented in README.md, "Frontend checks"). */
export type CheckCode =
  | 'raw_runtime_fetch'
  | 'deep_generated_import'
  | 'missing_bridge'
  | 'missing_provider'
  | 'orphan_ui_action'
  | 'entry_without_ui'
  | 'server_import_in_frontend'
  | 'agent_in_disallowed_context'
  | 'unknown_workflow'
  | 'unknown_scheduled_call'
  | 'unknown_cron_target'
  | 'invalid_cron'
  | 'parse_error'
  | 'unknown_policy'
  | 'generated_drift'
  | 'app_invalid'
  | 'type_error'
  | 'typecheck_skipped'
  | GenerateDiagnostic['code'];

/** Builds a diagnostic; `path` is derived from the location. */
export function checkDiagnostic(d: Omit<CheckDiagnostic, 'path'>): CheckDiagnostic {
  return {
    code: d.code,
    severity: d.severity,
    message: d.message,
    path: `${d.file}:${d.line}:${d.column}`,
    file: d.file,
    line: d.line,
    column: d.column,
    hint: d.hint,
    suggestedCommand: d.suggestedCommand,
  };
}

/** A generation diagnostic (`path` is `file` or `file:line:column`) in the check shape. */
export function fromGenerateDiagnostic(d: GenerateDiagnostic): CheckDiagnostic {
  const match = /^(.*?):(\d+):(\d+)$/.exec(d.path);
  return checkDiagnostic({
    code: d.code,
    severity: d.severity,
    message: d.message,
    file: match ? match[1]! : d.path,
    line: match ? Number(match[2]) : 1,
    column: match ? Number(match[3]) : 1,
    hint: 'See capabilityMap.json for what the analysis could not follow.',
    suggestedCommand: 'fw inspect capabilities --json',
  });
}

const severityOrder = { error: 0, warning: 1, info: 2 } as const;

/** Sorted by file, line, column, code: the same findings always print in the same order. */
export function sortDiagnostics<T extends CheckDiagnostic>(diagnostics: readonly T[]): T[] {
  return [...diagnostics].sort(
    (a, b) =>
      compare(a.file, b.file) || a.line - b.line || a.column - b.column || compare(a.code, b.code) ||
      severityOrder[a.severity] - severityOrder[b.severity] || compare(a.message, b.message),
  );
}

/**
 * `web/src/App.tsx:12:5 error raw_runtime_fetch message`, then the fix on indented lines: what the
 * `--json` report says as `hint` and `suggestedCommand` is what a person at the terminal needs too.
 *
 * @example
 *   formatDiagnostic(d)
 *   // "web/src/App.tsx:6:17 error wrong_kind …\n  hint: Did you mean 'liveTickets'? …\n  run: fw inspect client"
 */
export function formatDiagnostic(d: CheckDiagnostic): string {
  return [`${d.file}:${d.line}:${d.column} ${d.severity} ${d.code} ${d.message}`, ...formatFix(d)].join('\n');
}

/** The `hint:` and `run:` lines of a finding (none for what it lacks), indented under it. */
export function formatFix(d: { hint?: string | undefined; suggestedCommand?: string | undefined }, indent = '  '): string[] {
  return [...(d.hint ? [`${indent}hint: ${d.hint}`] : []), ...(d.suggestedCommand ? [`${indent}run: ${d.suggestedCommand}`] : [])];
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
