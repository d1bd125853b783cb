import { describe, expect, it } from 'vitest';
import { backoffCeilingMs, backoffDelayMs } from '../../src/http/retry-timing.js';
import { DefaultReconnectPolicy } from '../../src/realtime/recovery/reconnect-policy.js';
import { backoffWindowMs, fullJitterMs } from '../../src/util/backoff.js';
import { mulberry32 } from '../support/prng.js';

/** REST retries and socket reconnects draw their delays from one formula (util/backoff.ts). */
describe('one backoff', () => {
  it('caps the doubling window and never yields NaN', () => {
    expect([0, 1, 2, 3, 4, 5].map((d) => backoffWindowMs(d, 100, 1000))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(backoffWindowMs(5000, 0, 1000)).toBe(0);
    expect(backoffWindowMs(5000, 1, Number.POSITIVE_INFINITY)).toBe(2 ** 52);
  });

  it('draws whole milliseconds from the window, clamping a broken random source', () => {
    expect(fullJitterMs(400, () => 0.999999)).toBe(399);
    expect(fullJitterMs(400, () => Number.NaN)).toBe(0);
    expect(fullJitterMs(400, () => 7)).toBe(400);
  });

  it('gives a reconnect after n retries the delay of REST retry attempt n + 1 for the same policy and draws', () => {
    const policy = { baseMs: 250, maxMs: 5000 };
    const rest = mulberry32(11);
    const socket = mulberry32(11);
    const reconnect = new DefaultReconnectPolicy({ ...policy, maxElapsedMs: Number.POSITIVE_INFINITY, random: socket });
    for (let attempt = 0; attempt < 12; attempt++) {
      expect(reconnect.ceilingMs(attempt)).toBe(backoffCeilingMs(attempt + 1, policy));
      expect(reconnect.nextRetryDelayMs({ attempt, elapsedMs: 0, reason: 'lost' })).toBe(backoffDelayMs(attempt + 1, policy, rest));
    }
  });
});
