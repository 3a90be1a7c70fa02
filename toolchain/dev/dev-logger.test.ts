import { Writable } from 'node:stream';
import { createLogger } from 'vite';
import { afterEach, describe, expect, it } from 'vitest';
import { colourFor } from '../../runtime/config/colour.ts';
import { createDevLogger } from './dev-logger.ts';

/** A stream that keeps what is written, and says whether it is a terminal. */
function sink(isTTY: boolean) {
  let text = '';
  const stream = Object.assign(new Writable({ write(chunk, _e, done) { text += String(chunk); done(); } }), { isTTY });
  return { stream, text: () => text };
}

const saved = { NO_COLOR: process.env.NO_COLOR, FORCE_COLOR: process.env.FORCE_COLOR };
afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

function unset() {
  delete process.env.NO_COLOR;
  delete process.env.FORCE_COLOR;
}

describe('colourFor', () => {
  it('colours a terminal only, NO_COLOR turns it off, FORCE_COLOR decides when set', () => {
    expect(colourFor({ isTTY: true }, {})).toBe(true);
    expect(colourFor({ isTTY: false }, {})).toBe(false);
    expect(colourFor({}, {})).toBe(false);
    expect(colourFor({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colourFor({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
    expect(colourFor({ isTTY: false }, { FORCE_COLOR: '' })).toBe(true);
    expect(colourFor({ isTTY: true }, { FORCE_COLOR: '0' })).toBe(false);
    expect(colourFor({ isTTY: true }, { NO_COLOR: '1', FORCE_COLOR: '1' })).toBe(true);
  });
});

describe('the fw dev logger', () => {
  const red = '\u001b[31mfailed\u001b[39m';

  it('writes plain text to a stream that is not a terminal', () => {
    unset();
    const out = sink(false);
    createDevLogger(createLogger, 'info', out.stream).error(`fw: ${red}`, { timestamp: true });
    expect(out.text()).not.toContain('\u001b');
    expect(out.text()).toMatch(/\[vite\] fw: failed\n$/);
  });

  it('writes plain text to a terminal under NO_COLOR, and keeps colour under FORCE_COLOR', () => {
    unset();
    process.env.NO_COLOR = '1';
    const plain = sink(true);
    createDevLogger(createLogger, 'info', plain.stream).warn(red);
    expect(plain.text()).toBe('failed\n');

    unset();
    process.env.FORCE_COLOR = '1';
    const coloured = sink(false);
    createDevLogger(createLogger, 'info', coloured.stream).warn(red);
    expect(coloured.text()).toContain(red);
  });

  it('honours the level (warn hides info)', () => {
    unset();
    const out = sink(false);
    const logger = createDevLogger(createLogger, 'warn', out.stream);
    logger.info('hidden');
    logger.warn('shown');
    expect(out.text()).toBe('shown\n');
  });
});
