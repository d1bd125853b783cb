import { describe, expect, it } from 'vitest';
import { backoffCeilingMs, backoffDelayMs, parseRetryAfterMs, retryDelayMs } from '../../src/http/retry-timing.js';
import { mulberry32 } from '../support/prng.js';

const policy = { baseMs: 100, maxMs: 1000 };

describe('backoff', () => {
  it('doubles the window per attempt up to the cap', () => {
    expect([1, 2, 3, 4, 5, 6].map((a) => backoffCeilingMs(a, policy))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(backoffCeilingMs(10_000, policy)).toBe(1000);
  });

  it('refuses attempts below 1 or fractional', () => {
    expect(() => backoffCeilingMs(0, policy)).toThrow(RangeError);
    expect(() => backoffCeilingMs(1.5, policy)).toThrow(RangeError);
  });

  it('applies full jitter: the whole window [0, ceiling), driven by the injected random', () => {
    expect(backoffDelayMs(3, policy, () => 0)).toBe(0);
    expect(backoffDelayMs(3, policy, () => 0.5)).toBe(200);
    expect(backoffDelayMs(3, policy, () => 0.999999)).toBe(399);
    const random = mulberry32(7);
    const delays = Array.from({ length: 2000 }, () => backoffDelayMs(4, policy, random));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...delays)).toBeLessThan(800);
    // Spread over the window, not banded around the mean.
    expect(delays.filter((d) => d < 200).length).toBeGreaterThan(300);
    expect(delays.filter((d) => d >= 600).length).toBeGreaterThan(300);
  });

  it('clamps a broken random source', () => {
    expect(backoffDelayMs(2, policy, () => Number.NaN)).toBe(0);
    expect(backoffDelayMs(2, policy, () => 5)).toBe(200);
    expect(backoffDelayMs(2, policy, () => -1)).toBe(0);
  });
});

describe('Retry-After', () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);

  it('reads delta-seconds, including 0 and fractions', () => {
    expect(parseRetryAfterMs('3', now)).toBe(3000);
    expect(parseRetryAfterMs('0', now)).toBe(0);
    expect(parseRetryAfterMs(' 2 ', now)).toBe(2000);
    expect(parseRetryAfterMs('1.5', now)).toBe(1500);
  });

  it('reads an HTTP-date relative to now; a past date is 0', () => {
    expect(parseRetryAfterMs('Thu, 01 Jan 2026 12:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfterMs('Thu, 01 Jan 2026 11:59:00 GMT', now)).toBe(0);
  });

  it('ignores absent or unreadable values', () => {
    for (const value of [null, undefined, '', '-1', '1e3', 'soon', '+5', '0x10', 'Xyz, 99 Foo 2026']) expect(parseRetryAfterMs(value, now)).toBeUndefined();
  });

  it('prefers Retry-After over backoff, capped; falls back to backoff without it', () => {
    expect(retryDelayMs({ attempt: 1, retryAfterMs: 2500, policy, random: () => 0.5 })).toBe(2500);
    expect(retryDelayMs({ attempt: 1, retryAfterMs: 3_600_000, maxRetryAfterMs: 5000 })).toBe(5000);
    expect(retryDelayMs({ attempt: 1, retryAfterMs: 3_600_000 })).toBe(60_000);
    expect(retryDelayMs({ attempt: 2, policy, random: () => 0.5 })).toBe(100);
    expect(retryDelayMs({ attempt: 2, retryAfterMs: Number.NaN, policy, random: () => 0.5 })).toBe(100);
  });
});
