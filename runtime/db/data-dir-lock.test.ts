import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockDataDir } from './data-dir-lock.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function dataDir(): string {
  const parent = mkdtempSync(path.join(tmpdir(), 'fw-lock-'));
  dirs.push(parent);
  return path.join(parent, 'db');
}

describe('data directory lock', () => {
  it('writes the owner pid and removes the lock on release', () => {
    const dir = dataDir();
    const release = lockDataDir(dir);
    expect(readFileSync(`${dir}.lock`, 'utf8')).toBe(String(process.pid));
    release();
    expect(existsSync(`${dir}.lock`)).toBe(false);
  });

  it('refuses while a live process holds it', () => {
    const dir = dataDir();
    // PID 1 is always alive.
    writeFileSync(`${dir}.lock`, '1');
    expect(() => lockDataDir(dir)).toThrow(/in use by another process: pid 1 \(.+\)\. PGlite admits one process at a time\./);
  });

  it('takes over a lock whose process is gone', () => {
    const dir = dataDir();
    writeFileSync(`${dir}.lock`, '2147483646');
    const release = lockDataDir(dir);
    expect(readFileSync(`${dir}.lock`, 'utf8')).toBe(String(process.pid));
    release();
  });
});
