import { describe, expect, it } from 'vitest';
import { FwError } from '../../runtime/core/errors.ts';
import { logOnce } from './log-once.ts';

describe('logOnce', () => {
  const failure = (message: string, place = 'src/queries/liveNotes.ts:7:53') =>
    new FwError('internal', message, { diagnostics: [{ path: place, code: 'entry_failed', message }] });

  it('prints a failure once until it has been quiet for 10 s, a different one at once, and again after forget()', () => {
    let clock = 0;
    const printed: string[] = [];
    const once = logOnce((_error, traceId) => printed.push(traceId), () => clock);
    once.log(failure('a'), 't1');
    clock = 9_000;
    once.log(failure('a'), 't2');
    // Still failing 9 s after the last time: the same burst.
    clock = 18_000;
    once.log(failure('a'), 't3');
    once.log(failure('b'), 't4');
    once.log(failure('a', 'src/queries/other.ts:1:1'), 't5');
    clock = 28_000;
    once.log(failure('a'), 't6');
    once.forget();
    once.log(failure('b'), 't7');
    expect(printed).toEqual(['t1', 't4', 't5', 't6', 't7']);
  });
});
