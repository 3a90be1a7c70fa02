import { describe, expect, it } from 'vitest';
import { AppLoadError } from './app-load-error.ts';
import { overlayError } from './overlay-error.ts';

// The overlay of an app that does not load points where its message says (5:3), not at 1:1, and shows the fix.
describe('the overlay of an app load failure', () => {
  it('links the problem’s own place and prints its fix', () => {
    const error = new AppLoadError([{ file: 'src/commands/x.ts', line: 5, column: 3, message: 'uses policy "supervisor", which is not defined.', hint: 'Define it in src/policies.ts.' }]);
    expect(error.message).toBe('src/commands/x.ts:5:3: uses policy "supervisor", which is not defined.');
    expect(overlayError('/app', error)).toEqual({
      message: 'src/commands/x.ts:5:3: uses policy "supervisor", which is not defined.\n    fix: Define it in src/policies.ts.',
      stack: '',
      plugin: 'fw',
      id: '/app/src/commands/x.ts',
      loc: { file: '/app/src/commands/x.ts', line: 5, column: 3 },
    });
  });
});
