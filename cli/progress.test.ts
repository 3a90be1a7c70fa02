import { afterEach, describe, expect, it, vi } from 'vitest';
import { createProgress, createStatusLine, startActivity } from './progress.ts';

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

describe('startActivity', () => {
  it('on a terminal: a status line with the elapsed time, redrawn each second below the lines printed, then the summary', () => {
    vi.useFakeTimers();
    const out = stream(true);
    let now = 0;
    const activity = startActivity('Installing dependencies (npm install)', out, { now: () => now });
    expect(out.written).toEqual(['\r\u001b[2K… Installing dependencies (npm install) 0 s']);
    now = 1_000;
    vi.advanceTimersByTime(1_000);
    expect(out.written.at(-1)).toBe('\r\u001b[2K… Installing dependencies (npm install) 1 s');
    activity.print('added 12 packages');
    expect(out.written.slice(-3)).toEqual(['\r\u001b[2K', 'added 12 packages\n', '\r\u001b[2K… Installing dependencies (npm install) 1 s']);
    now = 65_000;
    activity.end(`Installed dependencies in ${activity.elapsed()}.`);
    expect(out.written.slice(-2)).toEqual(['\r\u001b[2K', 'Installed dependencies in 1 min 05 s.\n']);
    const count = out.written.length;
    vi.advanceTimersByTime(10_000);
    expect(out.written).toHaveLength(count);
  });

  it('elsewhere: plain lines only, the label when it starts, a reminder every 30 s, the summary', () => {
    vi.useFakeTimers();
    const out = stream(false);
    let now = 0;
    const activity = startActivity('Installing dependencies (npm install)', out, { now: () => now });
    activity.print('npm warn something');
    now = 30_000;
    vi.advanceTimersByTime(30_000);
    activity.end(`Installed dependencies in ${activity.elapsed()}.`);
    expect(out.written).toEqual([
      'Installing dependencies (npm install)…\n',
      'npm warn something\n',
      '… Installing dependencies (npm install): 30 s so far\n',
      'Installed dependencies in 30 s.\n',
    ]);
    expect(out.written.join('')).not.toContain('\u001b');
  });
});

describe('createStatusLine', () => {
  it('on a terminal: nothing for a run under the delay; after it, the line with the elapsed time, kept below the lines printed, erased at the end', () => {
    vi.useFakeTimers();
    const err = stream(true);
    const out = stream(true);
    let now = 0;
    const status = createStatusLine(err, { delayMs: 2_000, now: () => now });
    status.set('Testing: 0/2 files');
    status.print('RUN v5.1.1', out);
    now = 1_999;
    vi.advanceTimersByTime(1_999);
    expect(err.written).toEqual([]);
    expect(out.written).toEqual(['RUN v5.1.1\n']);
    now = 2_000;
    vi.advanceTimersByTime(1);
    expect(err.written).toEqual(['\r\u001b[2K… Testing: 0/2 files 2 s']);
    status.set('Testing: 1/2 files, 3 passed');
    expect(err.written.at(-1)).toBe('\r\u001b[2K… Testing: 1/2 files, 3 passed 2 s');
    status.print(' ✓ tests/a.test.ts (3 tests)', out);
    expect(err.written.slice(-2)).toEqual(['\r\u001b[2K', '\r\u001b[2K… Testing: 1/2 files, 3 passed 2 s']);
    expect(out.written.at(-1)).toBe(' ✓ tests/a.test.ts (3 tests)\n');
    now = 3_000;
    vi.advanceTimersByTime(1_000);
    expect(err.written.at(-1)).toBe('\r\u001b[2K… Testing: 1/2 files, 3 passed 3 s');
    status.end();
    expect(err.written.at(-1)).toBe('\r\u001b[2K');
    const count = err.written.length;
    vi.advanceTimersByTime(10_000);
    status.set('Testing: 2/2 files');
    expect(err.written).toHaveLength(count);
  });

  it('elsewhere: never draws, and passes the lines through', () => {
    vi.useFakeTimers();
    const err = stream(false);
    const status = createStatusLine(err);
    status.set('Testing: 0/2 files');
    vi.advanceTimersByTime(60_000);
    status.print('a line');
    status.end();
    expect(err.written).toEqual(['a line\n']);
  });
});
