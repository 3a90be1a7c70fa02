/**
 * A compiled statement with its parameters written in as literals, so it can travel in a
 * simple-protocol message with other statements (database.ts sends live reruns' SELECTs in the same
 * round trip as the transaction's prelude). It must mean exactly what the statement with parameters
 * means, and no value may ever change the statement's shape:
 *
 * - Each value becomes a dollar-quoted literal with a tag that occurs in no value: like a
 *   parameter sent without a type (how `pg` sends them), it is a constant of type `unknown`, resolved
 *   from its context by the same rules. Dollar quoting has no escapes, so nothing a session changed
 *   (`standard_conforming_strings`, `backslash_quote`, `client_encoding`: the message is lexed before
 *   the prelude resets them) alters where it ends, and `$` is never the second byte of a multibyte
 *   character in any encoding PostgreSQL accepts from clients.
 * - Only text that `pg` would send as the same text is inlined: strings, finite numbers, booleans,
 *   bigints and null. Anything else (dates, arrays, objects, buffers) is refused.
 * - The statement's own text is lexed first: every placeholder must stand where a value can (not in a
 *   string, a quoted identifier, a dollar-quoted body or a comment, nor glued to an identifier), and a
 *   backslash anywhere is refused (its meaning would depend on the session's settings), and so is a
 *   `;` outside them (a simple-protocol message runs every statement in it; a parameterised one, one).
 *
 * Anything refused yields `undefined`: the caller sends the statement with its parameters instead.
 *
 * @example
 *   inlineParameters({ sql: 'select * from "t" where "id" = $1', parameters: ['a'] });
 *   // 'select * from "t" where "id" =  $fw$a$fw$ '
 */
export function inlineParameters(query: { sql: string; parameters: readonly unknown[] }): string | undefined {
  const placeholders = placeholderPositions(query.sql);
  if (!placeholders || placeholders.length !== query.parameters.length) return undefined;
  const texts: Array<string | null> = [];
  for (const value of query.parameters) {
    const text = parameterText(value);
    if (text === undefined) return undefined;
    texts.push(text);
  }
  const tag = tagFor(texts.filter((text) => text !== null));
  let out = '';
  let from = 0;
  for (const { start, end, number } of placeholders) {
    const text = texts[number - 1]!;
    // Spaces keep the literal a token of its own whatever surrounds it.
    out += `${query.sql.slice(from, start)} ${text === null ? 'null' : `${tag}${text}${tag}`} `;
    from = end;
  }
  return out + query.sql.slice(from);
}

/**
 * `text` as a dollar-quoted literal: a constant of type `unknown`, lexed the same whatever the session's
 * settings (the prelude's identity values use it too).
 */
export function dollarQuoted(text: string): string {
  const tag = tagFor([text]);
  return `${tag}${text}${tag}`;
}

/**
 * `$fw$`, or `$fw1$`, `$fw2$`…: the first tag at which no text can end early. A dollar-quoted string
 * ends at the first occurrence of its tag, so the tag must not occur in the text, nor begin in it:
 * `abc$fw` closed by `$fw$` would end after `abc`.
 */
function tagFor(texts: readonly string[]): string {
  for (let i = 0; ; i++) {
    const tag = i === 0 ? '$fw$' : `$fw${i}$`;
    if (texts.every((text) => (text + tag).indexOf(tag) === text.length)) return tag;
  }
}

/** The text `pg` sends for a parameter (its `prepareValue`; null for SQL NULL), for the kinds inlined; undefined otherwise. */
function parameterText(value: unknown): string | null | undefined {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value.includes('\0') ? undefined : value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return undefined;
}

interface Placeholder {
  start: number;
  end: number;
  number: number;
}

/**
 * Where `$1`, `$2`… stand in `sql`, in order (each exactly once, numbered 1…n as Kysely compiles them),
 * or undefined when the text is not plain enough to inline into (see the module comment). A small
 * lexer of PostgreSQL's: strings (`'…'`, with `''`), quoted identifiers, dollar quotes, `--` and nested
 * `/* *\/` comments.
 */
function placeholderPositions(sql: string): Placeholder[] | undefined {
  if (sql.includes('\\') || sql.includes('\0')) return undefined;
  const found: Placeholder[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const close = closingQuote(sql, i + 1, c);
      if (close < 0) return undefined;
      i = close + 1;
    } else if (c === ';') {
      return undefined; // one statement only: the simple protocol would run a second one
    } else if (c === '-' && sql[i + 1] === '-') {
      const newline = sql.slice(i).search(/[\n\r]/);
      if (newline < 0) return undefined;
      i += newline + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const close = commentEnd(sql, i + 2);
      if (close < 0) return undefined;
      i = close;
    } else if (c === '$' && !identifierChar(sql[i - 1])) {
      const number = /^\$(\d+)/.exec(sql.slice(i, i + 12));
      if (number) {
        const end = i + number[0].length;
        if (identifierChar(sql[end]) || Number(number[1]) !== found.length + 1) return undefined;
        found.push({ start: i, end, number: Number(number[1]) });
        i = end;
        continue;
      }
      const opening = /^\$(?:[A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)?\$/.exec(sql.slice(i, i + 80));
      if (!opening) return undefined;
      const close = sql.indexOf(opening[0], i + opening[0].length);
      if (close < 0) return undefined;
      i = close + opening[0].length;
    } else {
      i++;
    }
  }
  return found;
}

/** The index of the quote that closes a string or quoted identifier opened before `from` (a doubled quote is part of it). */
function closingQuote(sql: string, from: number, quote: string): number {
  for (let i = from; i < sql.length; i++) {
    if (sql[i] !== quote) continue;
    if (sql[i + 1] === quote) i++;
    else return i;
  }
  return -1;
}

/** The index just after the `*\/` that closes a block comment opened before `from` (they nest). */
function commentEnd(sql: string, from: number): number {
  let depth = 1;
  for (let i = from; i < sql.length - 1; i++) {
    if (sql[i] === '/' && sql[i + 1] === '*') {
      depth++;
      i++;
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      depth--;
      i++;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** Whether `c` may continue an identifier (`$` included: `a$1` is one identifier, not `a` and `$1`). */
function identifierChar(c: string | undefined): boolean {
  return c !== undefined && /[\w$\u0080-\uffff]/.test(c);
}
