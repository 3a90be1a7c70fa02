import { Console } from 'node:console';
import { Writable } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import type { LogLevel, Logger, LoggerOptions } from 'vite';
import { colourFor } from '../../runtime/config/colour.ts';

/**
 * The logger fw dev hands Vite: every line to stderr (stdout is for the `--json` document), and
 * without ANSI colour unless `colourFor` allows it. Vite's own colours follow picocolors, which looks
 * at stdout and turns on under any `CI` variable, so a piped stderr got escape codes; stripping them
 * here covers Vite's lines and the fw plugin's alike.
 *
 * @example
 *   vite.createServer({ customLogger: createDevLogger(vite.createLogger, 'info') })
 */
export function createDevLogger(
  create: (level?: LogLevel, options?: LoggerOptions) => Logger,
  level: LogLevel,
  stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
): Logger {
  const colour = colourFor(stream);
  const sink = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      const text = String(chunk);
      stream.write(colour ? text : stripVTControlCharacters(text));
      done();
    },
  });
  return create(level, { allowClearScreen: false, console: new Console({ stdout: sink, stderr: sink, colorMode: colour }) });
}
