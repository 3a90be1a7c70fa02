import { describe, expect, it } from 'vitest';
import { checkDiagnostic, formatDiagnostic, formatFix } from './check-diagnostic.ts';

describe('formatDiagnostic', () => {
  it('prints the hint and the command that fixes it under the finding, as --json carries them', () => {
    const d = checkDiagnostic({
      code: 'wrong_kind' as never, severity: 'error', file: 'web/src/App.tsx', line: 6, column: 17,
      message: "useLiveQuery('ticketStats') names a query, not a liveQuery.",
      hint: "Use useQuery('ticketStats', args).", suggestedCommand: 'fw inspect client',
    });
    expect(formatDiagnostic(d)).toBe([
      "web/src/App.tsx:6:17 error wrong_kind useLiveQuery('ticketStats') names a query, not a liveQuery.",
      "  hint: Use useQuery('ticketStats', args).",
      '  run: fw inspect client',
    ].join('\n'));
  });

  it('leaves out what a finding lacks', () => {
    expect(formatFix({ hint: "Did you mean 'liveTickets'?" }, '    ')).toEqual(["    hint: Did you mean 'liveTickets'?"]);
    expect(formatFix({})).toEqual([]);
  });
});
