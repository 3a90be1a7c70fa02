import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from './app.ts';

/** A block that holds several files, split into the files its `// src/…` lines name. */
export function filesOfBlock(block: string): Record<string, string> {
  const found: Record<string, string> = {};
  let current: string | undefined;
  for (const line of block.split('\n')) {
    const named = /^\/\/ (src\/\S+\.ts)/.exec(line);
    if (named) found[(current = named[1]!)] = '';
    else if (current) found[current] += `${line}\n`;
  }
  return found;
}

/** The `ts` blocks marked `<!-- run by <test> -->` in `doc` (as `docs/x.md`), as written, in the page's order. */
export async function blocksRunBy(test: string, doc: string): Promise<string[]> {
  const text = await readFile(path.join(repoRoot, doc), 'utf8');
  const found = text.split(`<!-- run by ${test} -->\n\`\`\`ts\n`).slice(1).map((rest) => rest.slice(0, rest.indexOf('```')));
  if (found.length === 0) throw new Error(`${doc} has no block marked for ${test}`);
  return found;
}

/**
 * The files of `doc`'s blocks run by `test`, each with what the page leaves out added (`leftOut`, by
 * file: the imports, or the command around a fragment).
 */
export async function docFiles(test: string, doc: string, leftOut: Record<string, (source: string) => string>): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  for (const block of await blocksRunBy(test, doc)) {
    for (const [file, source] of Object.entries(filesOfBlock(block))) found[file] = leftOut[file] ? leftOut[file](source) : source;
  }
  return found;
}
