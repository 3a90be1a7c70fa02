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
