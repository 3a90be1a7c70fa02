import { describe, expect, it } from 'vitest';
import { codeFrame, type HotChannel, type TypeOverlayPayload, typeOverlay, typeOverlayError } from './typecheck-overlay.ts';
import type { TypeDiagnostic } from './typecheck.ts';

const root = '/app';
const source = "import x from 'y';\n\nexport const n: number = 'one';\nexport const m = 2;\n";
const read = (file: string) => {
  if (file === '/app/src/a.ts') return source;
  throw new Error(`no ${file}`);
};
const notANumber: TypeDiagnostic = { file: 'src/a.ts', line: 3, column: 14, code: 2322, message: "Type 'string' is not assignable to type 'number'." };
const missing: TypeDiagnostic = { file: 'web/src/b.tsx', line: 9, column: 1, code: 2304, message: "Cannot find name 'nope'." };

/** A websocket with `pages` pages open, recording what is sent to all and to each page that connects. */
function channel(pages: number) {
  const sent: TypeOverlayPayload[] = [];
  const toPage: TypeOverlayPayload[] = [];
  let connect: ((sendToPage: (payload: TypeOverlayPayload) => void) => void) | undefined;
  const hot: HotChannel & { pages: number } = {
    pages,
    send: (payload) => sent.push(payload),
    connected: () => hot.pages,
    onConnection: (listener) => (connect = listener),
  };
  return { hot, sent, toPage, pageOpens: () => connect!((payload) => toPage.push(payload)) };
}

describe('typeOverlayError', () => {
  it('lists every error with its place, links the first with a frame, and every place in the stack', () => {
    expect(typeOverlayError(root, [notANumber, missing], read)).toEqual({
      plugin: 'fw',
      message: [
        "2 type errors in 2 files (fw dev's typecheck; the page still runs)",
        "src/a.ts:3:14 TS2322 Type 'string' is not assignable to type 'number'.",
        "web/src/b.tsx:9:1 TS2304 Cannot find name 'nope'.",
      ].join('\n'),
      stack: '    at /app/src/a.ts:3:14\n    at /app/web/src/b.tsx:9:1',
      id: '/app/src/a.ts',
      loc: { file: '/app/src/a.ts', line: 3, column: 14 },
      frame: ["1 | import x from 'y';", '2 | ', "3 | export const n: number = 'one';", '  |              ^', '4 | export const m = 2;', '5 | '].join('\n'),
    });
  });

  it('has no link for a tsconfig error, and no frame for a file it cannot read', () => {
    expect(typeOverlayError(root, [{ file: 'tsconfig.json', code: 5023, message: "Unknown compiler option 'x'." }], read)).toEqual({
      plugin: 'fw',
      message: "1 type error in 1 file (fw dev's typecheck; the page still runs)\ntsconfig.json TS5023 Unknown compiler option 'x'.",
      stack: '    at /app/tsconfig.json',
    });
    expect(typeOverlayError(root, [missing], read)).not.toHaveProperty('frame');
  });

  it('lists twenty and counts the rest', () => {
    const many = Array.from({ length: 23 }, (_, i) => ({ ...notANumber, line: i + 1 }));
    const { message, stack } = typeOverlayError(root, many, read);
    expect(message.split('\n')).toHaveLength(22);
    expect(message.split('\n').at(-1)).toBe('… and 3 more (fw check lists them all)');
    expect(stack.split('\n')).toHaveLength(20);
  });
});

describe('codeFrame', () => {
  it('clips at the start and end of the file', () => {
    expect(codeFrame('/app/src/a.ts', 1, 1, () => 'only line')).toBe('1 | only line\n  | ^');
    expect(codeFrame('/app/src/a.ts', 10, 3, () => Array.from({ length: 11 }, (_, i) => `l${i + 1}`).join('\n'))).toBe(['8  | l8', '9  | l9', '10 | l10', '   |   ^', '11 | l11'].join('\n'));
  });
});

describe('typeOverlay', () => {
  it('shows errors on every result that has them, clears once when fixed, and says nothing for clean results', () => {
    const { hot, sent } = channel(1);
    const report = typeOverlay(root, hot, read);
    report([]);
    expect(sent).toEqual([]);
    report([notANumber]);
    report([notANumber]);
    expect(sent.map((p) => p.type)).toEqual(['error', 'error']);
    report([]);
    expect(sent.splice(0).at(-1)).toEqual({ type: 'update', updates: [] });
    report([]);
    expect(sent).toEqual([]);
  });

  it('shows the errors to each page that opens while they remain, and nothing once fixed', () => {
    const { hot, toPage, pageOpens } = channel(1);
    const report = typeOverlay(root, hot, read);
    report([notANumber]);
    pageOpens();
    expect(toPage).toEqual([{ type: 'error', err: typeOverlayError(root, [notANumber], read) }]);
    report([]);
    pageOpens();
    expect(toPage).toHaveLength(1);
  });

  it('with no page open, replaces the error Vite keeps for the next page by a reload once fixed', () => {
    const { hot, sent, pageOpens } = channel(0);
    const report = typeOverlay(root, hot, read);
    report([notANumber]);
    report([]);
    expect(sent.at(-1)).toEqual({ type: 'full-reload', path: '*' });
    // Kept and already given to a page (which has since closed): nothing left to replace.
    report([missing]);
    pageOpens();
    sent.length = 0;
    report([]);
    expect(sent).toEqual([]);
  });
});
