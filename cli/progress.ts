/**
 * A "still working" note for steps that can take seconds. It appears after `delayMs` (quick steps never
 * flicker). On a terminal it is one line, erased before the next real line is printed; elsewhere (a
 * pipe, a CI log, an IDE task, a coding agent) plain lines — the first after `delayMs`, then one every
 * few seconds ({@link QUIET_MS}) while the step runs — so no run is silent for long, and no cursor
 * control or colour reaches a file.
 *
 * @example
 *   const progress = createProgress();
 *   progress.start('typecheck'); await work(); progress.stop(); log('✔ typecheck');
 */
export interface Progress {
  start(what: string): void;
  stop(): void;
}

/** Off a terminal, the longest a step runs without a line saying so. */
export const QUIET_MS = 3_000;

export function createProgress(stream: { isTTY?: boolean; write(text: string): unknown } = process.stderr, delayMs = 2_000, now: () => number = Date.now): Progress {
  if (stream.isTTY !== true) return plainProgress(stream, delayMs, now);
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

/** {@link createProgress} off a terminal: a plain line after `delayMs`, then one every {@link QUIET_MS}. */
function plainProgress(stream: { write(text: string): unknown }, delayMs: number, now: () => number): Progress {
  let timer: NodeJS.Timeout | undefined;
  const stop = () => {
    clearTimeout(timer);
    clearInterval(timer);
    timer = undefined;
  };
  return {
    start(what) {
      stop();
      const started = now();
      timer = setTimeout(() => {
        stream.write(`… ${what}\n`);
        timer = setInterval(() => stream.write(`… ${what} ${formatElapsed(now() - started)}\n`), QUIET_MS);
        timer.unref();
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
 * pipes): plain lines — the label when it starts, the step's own lines as they come, the label with the
 * elapsed time after each {@link QUIET_MS} without a line (an install whose npm prints errors only), and
 * the summary.
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
  if (stream.isTTY !== true) return plainActivity(label, stream, elapsed, options.tickMs ?? 1_000, now);
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

function plainActivity(label: string, stream: { write(text: string): unknown }, elapsed: () => string, tickMs: number, now: () => number): Activity {
  let lastLine = now();
  const line = (text: string) => {
    lastLine = now();
    stream.write(`${text}\n`);
  };
  line(`… ${label}`);
  const timer = setInterval(() => {
    if (now() - lastLine >= QUIET_MS) line(`… ${label} ${elapsed()}`);
  }, tickMs);
  timer.unref();
  let ended = false;
  return {
    print: line,
    elapsed,
    end(summary) {
      if (ended) return;
      ended = true;
      clearInterval(timer);
      line(summary);
    },
  };
}

export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
}

/**
 * A status line below a command's own output (`fw test`: `… Testing: 3/10 files, 25 passed 4 s`). It
 * appears once the work has taken `delayMs`, so a quick run never flickers. On a terminal `set` changes
 * its text, it is redrawn each second with the elapsed time, and the lines `print`ed meanwhile go above
 * it (to `to`, stdout or stderr of the same terminal); `end` erases it. Elsewhere it is plain lines on
 * `stream`: the status when it first shows and each time it changes, and again after each
 * {@link QUIET_MS} without a line, so a piped run is never silent for long.
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
  /** Off a terminal: when a line last went out, and the status text it last said. */
  let lastLine = now();
  let lastSaid = '';
  const say = () => {
    if (!text) return;
    lastLine = now();
    lastSaid = text;
    stream.write(`… ${text} ${formatElapsed(now() - started)}\n`);
  };
  const delay = setTimeout(() => {
    visible = true;
    if (terminal) draw();
    else say();
    ticker = setInterval(terminal ? draw : () => void (now() - lastLine >= QUIET_MS && say()), options.tickMs ?? 1_000);
    ticker.unref();
  }, options.delayMs ?? 2_000);
  delay.unref();
  return {
    set(next) {
      text = next;
      if (!visible || ended) return;
      if (terminal) draw();
      else if (next !== lastSaid) say();
    },
    print(line, to = stream) {
      if (!terminal) {
        lastLine = now();
        return void to.write(`${line}\n`);
      }
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
