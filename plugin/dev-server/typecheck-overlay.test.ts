import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createServer } from 'vite';
import { describe, expect, it } from 'vitest';
import { until } from '../../e2e/support/until.ts';
import { codeFrame, type HotChannel, type TypeOverlayPayload, typeOverlay, typeOverlayError, viteOverlayChannel } from './typecheck-overlay.ts';
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

// A real Vite dev server: its restart (a vite.config edit) replaces its websocket, and a page that opens
// afterwards still gets the errors.
describe('viteOverlayChannel', () => {
  it('shows the errors to a page that opens after Vite restarted', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fw-overlay-'));
    await writeFile(path.join(dir, 'index.html'), '<!doctype html><title>t</title>\n');
    const overlay = viteOverlayChannel();
    const server = await createServer({ configFile: false, root: dir, logLevel: 'silent', server: { port: 0, host: '127.0.0.1' }, plugins: [overlay.plugin] });
    try {
      await server.listen();
      const report = typeOverlay(root, overlay.channel, read);
      report([notANumber]);
      await server.restart();
      const url = server.resolvedUrls!.local[0]!.replace(/^http/, 'ws');
      const socket = new WebSocket(`${url}?token=${server.config.webSocketToken}`, 'vite-hmr');
      const received: Array<{ type: string; err?: { message?: string } }> = [];
      socket.addEventListener('message', (event) => received.push(JSON.parse(String(event.data)) as { type: string }));
      try {
        await until(async () => received.some((p) => p.type === 'error'), 'the error on the restarted server', { timeoutMs: 30_000, intervalMs: 25 });
        expect(received.find((p) => p.type === 'error')?.err?.message).toBe(typeOverlayError(root, [notANumber], read).message);
        // The channel sends through the new websocket too: the fix clears the open page's overlay.
        report([]);
        await until(async () => received.some((p) => p.type === 'update'), 'the clearing update', { timeoutMs: 30_000, intervalMs: 25 });
      } finally {
        socket.close();
      }
    } finally {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
