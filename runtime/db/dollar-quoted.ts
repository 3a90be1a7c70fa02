/**
 * A string as a dollar-quoted SQL literal, for the values fw writes into its transaction prelude. The
 * prelude is one simple-protocol message whose first statements reset the session, and PostgreSQL
 * lexes the whole message before running any of it: a setting SQL injection in an earlier request left
 * in the pooled session still applies. Under `standard_conforming_strings = off` a backslash escapes a
 * quote, so a `'…'` literal could end early and the rest of the value run as SQL. Dollar quoting has no
 * escapes, so no setting changes where it ends (and `$` is never the second byte of a multibyte
 * character in any encoding PostgreSQL accepts from clients). Like `'…'`, it is a constant of type
 * `unknown`.
 *
 * @example
 *   dollarQuoted("it's");    // $fw$it's$fw$
 *   dollarQuoted('a$fw$b');  // $fw1$a$fw$b$fw1$
 */
export function dollarQuoted(text: string): string {
  const tag = tagFor(text);
  return `${tag}${text}${tag}`;
}

/**
 * `$fw$`, or `$fw1$`, `$fw2$`…: the first tag at which the text cannot end early. A dollar-quoted string
 * ends at the first occurrence of its tag, so the tag must not occur in the text, nor begin in it:
 * `abc$fw` closed by `$fw$` would end after `abc`.
 */
function tagFor(text: string): string {
  for (let i = 0; ; i++) {
    const tag = i === 0 ? '$fw$' : `$fw${i}$`;
    if ((text + tag).indexOf(tag) === text.length) return tag;
  }
}
