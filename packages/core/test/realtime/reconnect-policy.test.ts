import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors/client-errors.js';
import { isSoundCloneError } from '../../src/errors/guards.js';
import { DefaultReconnectPolicy } from '../../src/realtime/recovery/reconnect-policy.js';

const ctx = (attempt: number, elapsedMs = 0) => ({ attempt, elapsedMs, reason: 'test' });

describe('DefaultReconnectPolicy: capped exponential backoff with full jitter', () => {
  it('draws uniformly below a ceiling that doubles per attempt and stops at maxMs', () => {
    const top = new DefaultReconnectPolicy({ baseMs: 100, maxMs: 1000, random: () => 0.999999 });
    expect([0, 1, 2, 3, 4, 5, 60].map((a) => top.nextRetryDelayMs(ctx(a)))).toEqual([99, 199, 399, 799, 999, 999, 999]);
    const bottom = new DefaultReconnectPolicy({ baseMs: 100, maxMs: 1000, random: () => 0 });
    expect(bottom.nextRetryDelayMs(ctx(7))).toBe(0);
    const half = new DefaultReconnectPolicy({ baseMs: 100, maxMs: 1000, random: () => 0.5 });
    expect(half.nextRetryDelayMs(ctx(2))).toBe(200);
  });

  it('never overflows for huge attempt numbers', () => {
    const p = new DefaultReconnectPolicy({ baseMs: 250, maxMs: 5000, random: () => 0.5 });
    expect(p.ceilingMs(10_000)).toBe(5000);
    expect(p.nextRetryDelayMs(ctx(1e9))).toBe(2500);
  });

  it('gives up after maxAttempts or once the time budget is spent, and never sleeps past the budget', () => {
    const p = new DefaultReconnectPolicy({ baseMs: 1000, maxMs: 10_000, maxAttempts: 3, maxElapsedMs: 5000, random: () => 0.99 });
    expect(p.nextRetryDelayMs(ctx(2))).not.toBeNull();
    expect(p.nextRetryDelayMs(ctx(3))).toBeNull();
    expect(p.nextRetryDelayMs(ctx(0, 5000))).toBeNull();
    expect(p.nextRetryDelayMs(ctx(2, 4900))).toBe(100);
  });

  it('spreads a crowd: seeded draws cover the range instead of repeating one delay', () => {
    let seed = 42;
    const random = (): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const p = new DefaultReconnectPolicy({ baseMs: 1000, maxMs: 1000, random });
    const delays = Array.from({ length: 200 }, () => p.nextRetryDelayMs(ctx(0)) as number);
    expect(Math.min(...delays)).toBeLessThan(100);
    expect(Math.max(...delays)).toBeGreaterThan(900);
    expect(delays.every((d) => d >= 0 && d < 1000)).toBe(true);
  });

  it('refuses inconsistent options with a typed error listing every broken rule', () => {
    const refusal = (options: ConstructorParameters<typeof DefaultReconnectPolicy>[0]): unknown => {
      try {
        new DefaultReconnectPolicy(options);
      } catch (caught) {
        return caught;
      }
      return undefined;
    };
    const inverted = refusal({ baseMs: 10, maxMs: 5 });
    expect(inverted).toBeInstanceOf(ValidationError);
    expect(inverted).toMatchObject({ code: 'VALIDATION_FAILED', violations: [{ field: 'maxMs' }] });
    const several = refusal({ baseMs: Number.NaN, maxAttempts: -1, maxElapsedMs: -5 });
    expect(isSoundCloneError(several, ValidationError) && several.violations.map((v) => v.field)).toEqual(['baseMs', 'maxMs', 'maxAttempts', 'maxElapsedMs']);
    expect(refusal({ baseMs: 0, maxMs: 0, maxAttempts: 0, maxElapsedMs: 0 })).toBeUndefined();
  });
});
