import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/app.ts';

/**
 * Every code block in docs/ says whether a test runs it, on the line above its fence:
 * `<!-- run by e2e/….test.ts -->` (the test extracts the block and runs it as written),
 * `<!-- mirrored by e2e/….test.ts -->` (the test does what it says, in its own words),
 * `<!-- not run: why -->` (output, a wire format, a fragment, a diagram) or `<!-- not run yet: why -->`
 * (code meant to run that no test runs yet: a known gap, listed by this test's second case).
 */
interface Block {
  doc: string;
  line: number;
  marker: string | undefined;
  /** The block's first line. */
  first: string;
}

function blocks(): Block[] {
  const found: Block[] = [];
  for (const doc of readdirSync(path.join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).sort()) {
    const lines = readFileSync(path.join(repoRoot, 'docs', doc), 'utf8').split('\n');
    let open = false;
    lines.forEach((line, index) => {
      if (!line.trimStart().startsWith('```')) return;
      if (!open) found.push({ doc, line: index + 1, marker: /^\s*<!-- (.+) -->$/.exec(lines[index - 1] ?? '')?.[1], first: (lines[index + 1] ?? '').trim() });
      open = !open;
    });
  }
  return found;
}

const kinds = /^(run by|mirrored by) (e2e\/[\w.-]+\.test\.ts)$|^not run( yet)?: \S/;

describe('code blocks in docs/', () => {
  it('each says on the line above it whether a test runs it, and the test it names exists and reads that page', () => {
    const all = blocks();
    expect(all.length).toBeGreaterThan(40);
    expect(all.filter((b) => !b.marker || !kinds.test(b.marker)).map((b) => `docs/${b.doc}:${b.line} ${b.marker ?? '(no marker)'}`)).toEqual([]);
    for (const block of all) {
      const test = /^(?:run by|mirrored by) (\S+)$/.exec(block.marker!)?.[1];
      if (!test) continue;
      expect(existsSync(path.join(repoRoot, test)), `${test} (docs/${block.doc}:${block.line})`).toBe(true);
      expect(readFileSync(path.join(repoRoot, test), 'utf8'), `${test} reads docs/${block.doc}`).toContain(`docs/${block.doc}`);
    }
  });

  it('lists the blocks meant to run that no test runs yet', () => {
    const gaps = blocks().filter((b) => b.marker?.startsWith('not run yet:'));
    // A known list, so a new gap is a decision: run the block, or add it here.
    expect(gaps.map((b) => `${b.doc}: ${b.first.slice(0, 36).trimEnd()}`)).toEqual([
      'deploy.md: import { createServer } from \'node:h',
    ]);
  });
});
