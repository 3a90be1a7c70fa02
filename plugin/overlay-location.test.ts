import { describe, expect, it } from 'vitest';
import { FwFailure } from '../runtime/core/failure.ts';
import { AppLoadError } from './load-app.ts';
import { overlayLocation, overlayMessage } from './overlay-location.ts';

describe('the overlay of a backend failure', () => {
  it('points where the message says (5:3), not at 1:1', () => {
    const error = new AppLoadError([{ file: 'src/commands/x.ts', line: 5, column: 3, message: 'uses policy "supervisor", which is not defined.', hint: 'Define it in src/policies.ts.' }]);
    expect(error.message).toBe('src/commands/x.ts:5:3: uses policy "supervisor", which is not defined.');
    expect(overlayLocation('/app', error)).toEqual({ file: '/app/src/commands/x.ts', line: 5, column: 3 });
    expect(overlayMessage(error)).toBe('src/commands/x.ts:5:3: uses policy "supervisor", which is not defined.\nhint: Define it in src/policies.ts.');
  });

  it('reads a diagnostic path file:line:column, and a bare file as its first line', () => {
    const located = new FwFailure('build_failed', 'x', { diagnostics: [{ path: 'src/a.ts:7:9', message: 'm', code: 'c' }], suggestions: ['fw build'] });
    expect(overlayLocation('/app', located)).toEqual({ file: '/app/src/a.ts', line: 7, column: 9 });
    expect(overlayMessage(located)).toBe('x\nrun: fw build');
    const bare = new FwFailure('build_failed', 'x', { diagnostics: [{ path: 'src/a.ts', message: 'm', code: 'c' }] });
    expect(overlayLocation('/app', bare)).toEqual({ file: '/app/src/a.ts', line: 1, column: 1 });
    expect(overlayLocation('/app', new Error('no place'))).toBeUndefined();
  });
});
