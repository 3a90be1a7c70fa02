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
  it('off a terminal: nothing for a quick step; for a slow one a plain line after the delay, then one every 3 s, none after it ends', () => {
    vi.useFakeTimers();
    const out = stream(false);
    let now = 0;
    const progress = createProgress(out, 2_000, () => now);
    progress.start('generated');
    vi.advanceTimersByTime(1_999);
    progress.stop();
    expect(out.written).toEqual([]);

    progress.start('typecheck');
    now = 2_000;
    vi.advanceTimersByTime(2_000);
    expect(out.written).toEqual(['… typecheck\n']);
    now = 5_000;
    vi.advanceTimersByTime(3_000);
    now = 8_000;
    vi.advanceTimersByTime(3_000);
    expect(out.written).toEqual(['… typecheck\n', '… typecheck 5 s\n', '… typecheck 8 s\n']);
    progress.stop();
    vi.advanceTimersByTime(60_000);
    expect(out.written).toHaveLength(3);
    expect(out.written.join('')).not.toContain('\u001b');
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

  it('elsewhere: plain lines — the label, the step\'s own lines, a reminder after each 3 s without one, the summary', () => {
    vi.useFakeTimers();
    const out = stream(false);
    let now = 0;
    const activity = startActivity('Installing dependencies (npm install)', out, { now: () => now });
    expect(out.written).toEqual(['… Installing dependencies (npm install)\n']);
    now = 2_000;
    vi.advanceTimersByTime(2_000);
    activity.print('npm warn something');
    now = 4_000;
    vi.advanceTimersByTime(2_000);
    expect(out.written).toHaveLength(2);
    now = 5_000;
    vi.advanceTimersByTime(1_000);
    expect(out.written.at(-1)).toBe('… Installing dependencies (npm install) 5 s\n');
    now = 120_000;
    activity.end(`Installed dependencies in ${activity.elapsed()}.`);
    activity.print('after the end');
    expect(out.written.slice(-2)).toEqual(['Installed dependencies in 2 min 00 s.\n', 'after the end\n']);
    const count = out.written.length;
    vi.advanceTimersByTime(60_000);
    expect(out.written).toHaveLength(count);
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

  it('intercepting a terminal\'s streams: what anything else writes goes above the line, a partial line waits for its end, and the streams are given back at the end', () => {
    vi.useFakeTimers();
    const err = stream(true);
    const out = stream(true);
    const originals = [err.write, out.write];
    let now = 0;
    const status = createStatusLine(err, { delayMs: 2_000, now: () => now, intercept: [err, out] });
    status.set('fw dev: loading the app');
    err.write('quick line\n');
    expect(err.written).toEqual(['quick line\n']);
    now = 2_000;
    vi.advanceTimersByTime(2_000);
    expect(err.written.at(-1)).toBe('\r\u001b[2K… fw dev: loading the app 2 s');
    // Another writer's line: the status is erased, the line written, the status drawn again below it.
    err.write('VITE ready\n');
    expect(err.written.slice(-3)).toEqual(['\r\u001b[2K', 'VITE ready\n', '\r\u001b[2K… fw dev: loading the app 2 s']);
    out.write('on stdout\n');
    expect(err.written.slice(-2)).toEqual(['\r\u001b[2K', '\r\u001b[2K… fw dev: loading the app 2 s']);
    expect(out.written).toEqual(['on stdout\n']);
    // A partial line: no redraw (it would overwrite it) until the line ends, the ticks included.
    err.write('half a ');
    const afterPartial = err.written.length;
    now = 3_000;
    vi.advanceTimersByTime(1_000);
    status.set('fw dev: migrating the database');
    expect(err.written).toHaveLength(afterPartial);
    err.write('line\n');
    expect(err.written.slice(-2)).toEqual(['line\n', '\r\u001b[2K… fw dev: migrating the database 3 s']);
    status.print('printed');
    expect(err.written.slice(-3)).toEqual(['\r\u001b[2K', 'printed\n', '\r\u001b[2K… fw dev: migrating the database 3 s']);
    status.end();
    expect(err.written.at(-1)).toBe('\r\u001b[2K');
    expect([err.write, out.write]).toEqual(originals);
    err.write('after\n');
    expect(err.written.at(-1)).toBe('after\n');
  });

  it('streams that are not a terminal are not intercepted: their writes are left as they are', () => {
    vi.useFakeTimers();
    const err = stream(false);
    const write = err.write;
    const status = createStatusLine(err, { intercept: [err] });
    expect(err.write).toBe(write);
    status.end();
  });

  it('elsewhere: plain lines — the status after the delay and at each change, again after each 3 s without a line; lines passed through', () => {
    vi.useFakeTimers();
    const err = stream(false);
    let now = 0;
    const status = createStatusLine(err, { delayMs: 2_000, now: () => now });
    status.set('fw dev: loading the app');
    now = 1_000;
    vi.advanceTimersByTime(1_000);
    expect(err.written).toEqual([]);
    now = 2_000;
    vi.advanceTimersByTime(1_000);
    expect(err.written).toEqual(['… fw dev: loading the app 2 s\n']);
    now = 2_500;
    status.set('fw dev: migrating the database');
    status.set('fw dev: migrating the database');
    expect(err.written.at(-1)).toBe('… fw dev: migrating the database 3 s\n');
    expect(err.written).toHaveLength(2);
    status.print('a line');
    now = 5_000;
    vi.advanceTimersByTime(2_500);
    expect(err.written).toHaveLength(3);
    now = 6_000;
    vi.advanceTimersByTime(1_000);
    expect(err.written.at(-1)).toBe('… fw dev: migrating the database 6 s\n');
    status.end();
    vi.advanceTimersByTime(60_000);
    expect(err.written).toHaveLength(4);
    expect(err.written.join('')).not.toContain('\u001b');
  });
});
