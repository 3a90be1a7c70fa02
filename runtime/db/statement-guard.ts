/**
 * The statements a handler may not send: those that end fw's transaction or start another. A handler
 * runs inside the transaction fw opened for its caller's identity; a COMMIT there would let the rest
 * of the handler — or an injection — run outside it. (Several statements in one string never reach
 * this far: the extended protocol refuses them, see wire.ts.)
 *
 * Only the statement's first keywords decide, as in PostgreSQL's grammar; comments and whitespace
 * before them are skipped. `ROLLBACK TO [SAVEPOINT]`, savepoints and everything else pass.
 */

/** The transaction-control statement `sql` is (`COMMIT`, `BEGIN`, …), or undefined when it is none. */
export function transactionControl(sql: string): string | undefined {
  const words = leadingWords(sql, 4);
  const [first, second, third] = words;
  switch (first) {
    case 'begin':
    case 'commit':
    case 'end':
    case 'abort':
      return first.toUpperCase();
    case 'start':
      return second === 'transaction' ? 'START TRANSACTION' : undefined;
    case 'prepare':
      return second === 'transaction' ? 'PREPARE TRANSACTION' : undefined;
    case 'rollback': {
      const next = second === 'work' || second === 'transaction' ? third : second;
      return next === 'to' ? undefined : 'ROLLBACK';
    }
    default:
      return undefined;
  }
}

/** Up to `count` leading words of `sql`, lower-cased, skipping whitespace and comments (nested block comments too). */
function leadingWords(sql: string, count: number): string[] {
  const words: string[] = [];
  let i = 0;
  while (i < sql.length && words.length < count) {
    const char = sql[i]!;
    if (/\s/.test(char)) {
      i++;
    } else if (sql.startsWith('--', i)) {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end + 1;
    } else if (sql.startsWith('/*', i)) {
      let depth = 0;
      do {
        if (sql.startsWith('/*', i)) {
          depth++;
          i += 2;
        } else if (sql.startsWith('*/', i)) {
          depth--;
          i += 2;
        } else {
          i++;
        }
      } while (depth > 0 && i < sql.length);
    } else {
      const word = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(sql.slice(i, i + 64))?.[0];
      if (!word) break;
      words.push(word.toLowerCase());
      i += word.length;
    }
  }
  return words;
}
