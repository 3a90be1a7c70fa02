import { configOf, type FwConfig } from './resolve-config.ts';
import type { Environment } from './environment.ts';

/**
 * Whether fw may write ANSI colour to `stream`: `FORCE_COLOR` decides when set (`0`/`false` never,
 * anything else always, as Node's own `tty` does), then `NO_COLOR` turns it off, and otherwise only a
 * terminal gets colour — piped output, files and CI logs read as plain text.
 *
 * @example
 *   colourFor(process.stderr) // false under `fw dev 2> dev.log`, or with NO_COLOR=1
 */
export function colourFor(stream: { isTTY?: boolean }, source?: FwConfig | Environment): boolean {
  const config = configOf(source);
  const force = config.given('FORCE_COLOR');
  if (force !== undefined) return !['0', 'false'].includes(force.toLowerCase());
  if (config.given('NO_COLOR') !== undefined) return false;
  return stream.isTTY === true;
}
