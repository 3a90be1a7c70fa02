import { afterEach, describe, expect, it, vi } from 'vitest';
import { createProgress } from './progress.ts';

function stream(isTTY: boolean) {
  const written: string[] = [];
  return { isTTY, write: (text: string) => written.push(text), written };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('createProgress', () => {
  it('writes nothing to a stream that is not a terminal, however long the step', () => {
    vi.useFakeTimers();
    const out = stream(false);
    const progress = createProgress(out, 2_000);
    progress.start('typecheck…');
    vi.advanceTimersByTime(60_000);
    progress.stop();
    expect(out.written).toEqual([]);
  });

  it('on a terminal: nothing for a quick step; a line for a slow one, erased when it ends', () => {
    vi.useFakeTimers();
    const out = stream(true);
    const progress = createProgress(out, 2_000);
    progress.start('generated…');
    vi.advanceTimersByTime(1_999);
    progress.stop();
    expect(out.written).toEqual([]);

    progress.start('typecheck…');
    vi.advanceTimersByTime(2_000);
    expect(out.written).toEqual(['… typecheck…']);
    progress.stop();
    expect(out.written).toEqual(['… typecheck…', '\r\u001b[2K']);
  });
});
