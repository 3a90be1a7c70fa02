/**
 * A one-line "still working" note for steps that can take seconds, on a terminal only: piped output,
 * log files and `--json` runs get nothing extra. The line appears after `delayMs` (quick steps never
 * flicker) and is erased before the next real line is printed.
 *
 * @example
 *   const progress = createProgress();
 *   progress.start('typecheck'); await work(); progress.stop(); log('✔ typecheck');
 */
export interface Progress {
  start(what: string): void;
  stop(): void;
}

export function createProgress(stream: { isTTY?: boolean; write(text: string): unknown } = process.stderr, delayMs = 2_000): Progress {
  if (stream.isTTY !== true) return { start() {}, stop() {} };
  let timer: NodeJS.Timeout | undefined;
  let shown = false;
  const stop = () => {
    clearTimeout(timer);
    timer = undefined;
    // Carriage return and erase-line: cursor control, not colour, and a terminal-only one.
    if (shown) stream.write('\r\u001b[2K');
    shown = false;
  };
  return {
    start(what) {
      stop();
      timer = setTimeout(() => {
        shown = true;
        stream.write(`… ${what}`);
      }, delayMs);
      timer.unref();
    },
    stop,
  };
}

/**
 * A step that takes a while and prints as it goes (an install), said while it runs. On a terminal: one
 * status line with the elapsed time (`… Installing dependencies (npm install) 12 s`), redrawn every
 * second below whatever the step prints. Elsewhere (CI logs, pipes): `label…` when it starts, a plain
 * reminder every `reminderMs`, and the step's own lines as they come. `end` replaces it with a summary.
 *
 * @example
 *   const activity = startActivity('Installing dependencies (npm install)');
 *   child.stdout.on('line', activity.print);
 *   activity.end(`Installed dependencies in ${activity.elapsed()}.`);
 */
export interface Activity {
  print(line: string): void;
  /** The time since it started, as a person reads it: `12 s`, `1 min 05 s`. */
  elapsed(): string;
  end(summary: string): void;
}

export function startActivity(
  label: string,
  stream: { isTTY?: boolean; write(text: string): unknown } = process.stderr,
  options: { tickMs?: number; reminderMs?: number; now?: () => number } = {},
): Activity {
  const now = options.now ?? Date.now;
  const started = now();
  const elapsed = () => formatElapsed(now() - started);
  const terminal = stream.isTTY === true;
  // Carriage return and erase-line: a terminal-only redraw of the one status line.
  const draw = () => void stream.write(`\r\u001b[2K… ${label} ${elapsed()}`);
  const clear = () => void stream.write('\r\u001b[2K');
  let ended = false;
  let timer: NodeJS.Timeout;
  if (terminal) {
    draw();
    timer = setInterval(draw, options.tickMs ?? 1_000);
  } else {
    stream.write(`${label}…\n`);
    timer = setInterval(() => void stream.write(`… ${label}: ${elapsed()} so far\n`), options.reminderMs ?? 30_000);
  }
  timer.unref();
  return {
    print(line) {
      if (ended) return void stream.write(`${line}\n`);
      if (terminal) {
        clear();
        stream.write(`${line}\n`);
        draw();
      } else stream.write(`${line}\n`);
    },
    elapsed,
    end(summary) {
      if (ended) return;
      ended = true;
      clearInterval(timer);
      if (terminal) clear();
      stream.write(`${summary}\n`);
    },
  };
}

export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
}

/**
 * A status line below a command's own output (`fw test`: `… Testing: 3/10 files, 25 passed 4 s`), on a
 * terminal only. It appears once the work has taken `delayMs`, so a quick run never flickers; `set`
 * changes its text, it is redrawn each second with the elapsed time, and the lines `print`ed meanwhile
 * go above it (to `to`, stdout or stderr of the same terminal). Elsewhere it draws nothing and `print`
 * passes lines through. `end` erases it.
 *
 * @example
 *   const status = createStatusLine();
 *   status.set('Testing: 0/4 files');
 *   status.print('✓ tests/a.test.ts (3 tests)', process.stdout);
 *   status.end();
 */
export interface StatusLine {
  set(text: string): void;
  print(line: string, to?: { write(text: string): unknown }): void;
  end(): void;
}

export function createStatusLine(
  stream: { isTTY?: boolean; write(text: string): unknown } = process.stderr,
  options: { delayMs?: number; tickMs?: number; now?: () => number } = {},
): StatusLine {
  const terminal = stream.isTTY === true;
  const now = options.now ?? Date.now;
  const started = now();
  let text = '';
  let shown = false;
  let ended = false;
  // Carriage return and erase-line: a terminal-only redraw of the one status line.
  const draw = () => {
    if (!text) return;
    shown = true;
    stream.write(`\r\u001b[2K… ${text} ${formatElapsed(now() - started)}`);
  };
  const clear = () => {
    if (shown) stream.write('\r\u001b[2K');
    shown = false;
  };
  let visible = false;
  let ticker: NodeJS.Timeout | undefined;
  const delay = terminal
    ? setTimeout(() => {
        visible = true;
        draw();
        ticker = setInterval(draw, options.tickMs ?? 1_000);
        ticker.unref();
      }, options.delayMs ?? 2_000)
    : undefined;
  delay?.unref();
  return {
    set(next) {
      text = next;
      if (visible && !ended) draw();
    },
    print(line, to = stream) {
      if (!shown) return void to.write(`${line}\n`);
      clear();
      to.write(`${line}\n`);
      draw();
    },
    end() {
      if (ended) return;
      ended = true;
      clearTimeout(delay);
      clearInterval(ticker);
      clear();
    },
  };
}
