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
 * second below whatever the step prints, which `end` replaces with a summary. Elsewhere (CI logs,
 * pipes): nothing extra — the step's own lines as they come, no status, no reminders, no summary.
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
  options: { tickMs?: number; now?: () => number } = {},
): Activity {
  const now = options.now ?? Date.now;
  const started = now();
  const elapsed = () => formatElapsed(now() - started);
  if (stream.isTTY !== true) return { print: (line) => void stream.write(`${line}\n`), elapsed, end: () => undefined };
  // Carriage return and erase-line: a terminal-only redraw of the one status line.
  const draw = () => void stream.write(`\r\u001b[2K… ${label} ${elapsed()}`);
  const clear = () => void stream.write('\r\u001b[2K');
  let ended = false;
  draw();
  const timer = setInterval(draw, options.tickMs ?? 1_000);
  timer.unref();
  return {
    print(line) {
      if (ended) return void stream.write(`${line}\n`);
      clear();
      stream.write(`${line}\n`);
      draw();
    },
    elapsed,
    end(summary) {
      if (ended) return;
      ended = true;
      clearInterval(timer);
      clear();
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
 * `intercept` (streams of the same terminal, e.g. process.stderr and process.stdout): until `end`, what
 * anything else writes to them goes above the line too — for work whose output fw does not route
 * (`fw dev`'s start: Vite's logger, the app's own console). A partial line waits for its end before the
 * status is drawn again.
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
  options: { delayMs?: number; tickMs?: number; now?: () => number; intercept?: ReadonlyArray<Interceptable> } = {},
): StatusLine {
  const terminal = stream.isTTY === true;
  const now = options.now ?? Date.now;
  const started = now();
  let text = '';
  let shown = false;
  let ended = false;
  /** Drawn from the end of the delay on. */
  let visible = false;
  /** Something else left a line unfinished on the terminal: the status waits below it for its end. */
  let partial = false;
  // The line's own writes bypass the interception below.
  const restores: Array<() => void> = [];
  const intercepted = new Set<unknown>();
  let ownWrite: ((chunk: string) => unknown) | undefined;
  const writeOwn = (chunk: string) => void (ownWrite ? ownWrite(chunk) : stream.write(chunk));
  // Carriage return and erase-line: a terminal-only redraw of the one status line.
  const draw = () => {
    if (!text || partial) return;
    shown = true;
    writeOwn(`\r\u001b[2K… ${text} ${formatElapsed(now() - started)}`);
  };
  const clear = () => {
    if (shown) writeOwn('\r\u001b[2K');
    shown = false;
  };
  if (terminal) {
    for (const target of options.intercept ?? []) {
      const original = target.write;
      const passThrough = (...args: unknown[]) => (original as (...a: unknown[]) => boolean).apply(target, args);
      if (target === stream) ownWrite = (chunk) => passThrough(chunk);
      const wrapper = (...args: unknown[]) => {
        clear();
        const result = passThrough(...args);
        const chunk = args[0];
        const written = typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : '';
        if (written.length > 0) partial = !written.endsWith('\n');
        if (visible && !ended) draw();
        return result;
      };
      target.write = wrapper as Interceptable['write'];
      intercepted.add(target);
      restores.push(() => {
        if (target.write === wrapper) target.write = original;
      });
    }
  }
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
      // An intercepted stream puts the line above the status by itself.
      if (!shown || (intercepted.has(to) && !ended)) return void to.write(`${line}\n`);
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
      for (const restore of restores) restore();
    },
  };
}

/** A stream whose writes a status line can route above itself (process.stderr, process.stdout). */
export interface Interceptable {
  isTTY?: boolean;
  write(...args: any[]): unknown;
}
