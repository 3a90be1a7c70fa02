import { describe, expect, it } from 'vitest';
import { backoffDelay, checkBackoff } from './backoff.ts';

describe('backoffDelay', () => {
  it('doubles the ceiling with each retry up to the cap', () => {
    const atCeiling = { baseMs: 250, capMs: 15_000, random: () => 1 };
    expect([0, 1, 2, 6, 7, 50, 5000].map((retry) => backoffDelay(retry, atCeiling))).toEqual([250, 500, 1000, 15_000, 15_000, 15_000, 15_000]);
    // A negative retry counts as the first.
    expect(backoffDelay(-3, atCeiling)).toBe(250);
  });

  it('full jitter by default: anywhere from 0 to the ceiling', () => {
    const base = { baseMs: 1000, capMs: 5000 };
    expect(backoffDelay(2, { ...base, random: () => 0 })).toBe(0);
    expect(backoffDelay(2, { ...base, random: () => 0.5 })).toBe(2000);
    for (let i = 0; i < 200; i++) {
      const delay = backoffDelay(2, base);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(4000);
    }
  });

  it('jitter 0.5 waits at least half the ceiling', () => {
    const half = { baseMs: 1000, capMs: 5000, jitter: 0.5 };
    expect(backoffDelay(2, { ...half, random: () => 0 })).toBe(2000);
    expect(backoffDelay(2, { ...half, random: () => 1 })).toBe(4000);
    for (let i = 0; i < 200; i++) {
      const delay = backoffDelay(1, half);
      expect(delay).toBeGreaterThanOrEqual(1000);
      expect(delay).toBeLessThanOrEqual(2000);
    }
  });

  it('clamps a random source outside [0, 1]', () => {
    expect(backoffDelay(0, { baseMs: 100, capMs: 100, random: () => 7 })).toBe(100);
    expect(backoffDelay(0, { baseMs: 100, capMs: 100, random: () => -1 })).toBe(0);
  });
});

describe('checkBackoff', () => {
  it('returns good settings and names the option of bad ones', () => {
    const good = { baseMs: 10, capMs: 20, jitter: 0.5 };
    expect(checkBackoff(good, 'x')).toBe(good);
    expect(() => checkBackoff({ baseMs: 10, capMs: 5 }, 'createOutboxWorker({ backoff })')).toThrow(
      'fw: createOutboxWorker({ backoff }) needs 0 ≤ baseMs ≤ capMs and jitter in [0, 1], got baseMs 10, capMs 5, jitter 1.',
    );
    expect(() => checkBackoff({ baseMs: -1, capMs: 5 }, 'x')).toThrow(/baseMs -1/);
    expect(() => checkBackoff({ baseMs: 1, capMs: 5, jitter: 2 }, 'x')).toThrow(/jitter 2/);
    expect(() => checkBackoff({ baseMs: Number.NaN, capMs: 5 }, 'x')).toThrow(/baseMs NaN/);
  });
});
