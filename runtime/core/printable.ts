/**
 * Text that is safe to put in a log line: control characters (C0, DEL, C1) and the Unicode line and
 * paragraph separators become visible escapes, so a caller's input cannot end the line, forge the next
 * one, or send escape sequences to an operator's terminal.
 *
 * @example
 *   console.error(`fw: ${code} ${printable(error.message)}`);   // "a\nb\x1b[31m" → "a\\nb\\x1b[31m"
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (char) => named[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u001b': '\\x1b' };

/** The frames of an error's stack, each line made printable (the message is left out: log it with `printable`). */
export function printableFrames(error: unknown): string {
  const stack = error instanceof Error ? error.stack : undefined;
  if (!stack) return '';
  // The stack starts with "Name: message", and a caller's message may hold "\n    at …" lines of its
  // own: cut the message off first, so only real frames remain.
  const header = String(error);
  return (stack.startsWith(header) ? stack.slice(header.length) : stack)
    .split('\n')
    .filter((line) => /^\s+at\s/.test(line))
    .map((line) => printable(line))
    .join('\n');
}
