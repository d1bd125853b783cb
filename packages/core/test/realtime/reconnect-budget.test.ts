import { describe, expect, it } from 'vitest';
import { CLOSE_CODES, FINAL_CLOSE_CODES } from '../../src/protocol.js';
import { ValidationError } from '../../src/errors/client-errors.js';
import { isSoundCloneError } from '../../src/errors/guards.js';
import { CLOSE_CLASSES, classifyLoss } from '../../src/realtime/recovery/loss-classes.js';
import { DefaultReconnectPolicy, type ReconnectContext } from '../../src/realtime/recovery/reconnect-policy.js';
import { SessionRecovery, type RecoveryAction, type RecoveryFacts } from '../../src/realtime/recovery/recovery.js';
import { freshCredentials } from '../../src/realtime/socket/credentials.js';
import { checkSessionOptions } from '../../src/realtime/options/checks.js';

describe('close codes: one table of fatal / refresh / retry', () => {
  it('classifies every close code and refused upgrade', () => {
    expect(classifyLoss(CLOSE_CODES.abnormal, undefined, false)).toBe('retry');
    expect(classifyLoss(1001, undefined, false)).toBe('retry');
    expect(classifyLoss(4999, undefined, false)).toBe('retry');
    expect(classifyLoss(CLOSE_CODES.HEARTBEAT_TIMEOUT, undefined, false)).toBe('retry');
    expect(classifyLoss(CLOSE_CODES.SLOW_CONSUMER, undefined, false)).toBe('retry');
    expect(classifyLoss(CLOSE_CODES.SERVER_GOING_AWAY, undefined, false)).toBe('retry');
    for (const code of [CLOSE_CODES.REPLACED, CLOSE_CODES.PROTOCOL_VIOLATION, CLOSE_CODES.SESSION_NOT_FOUND, CLOSE_CODES.SESSION_FINISHED, CLOSE_CODES.RECOVERY_WINDOW_EXPIRED]) {
      expect(classifyLoss(code, undefined, true)).toBe('fatal');
    }
    expect(classifyLoss(CLOSE_CODES.AUTH_FAILED, undefined, true)).toBe('refresh');
    expect(classifyLoss(CLOSE_CODES.AUTH_FAILED, undefined, false)).toBe('fatal');
    expect(classifyLoss(CLOSE_CODES.abnormal, 401, true)).toBe('refresh');
    expect(classifyLoss(CLOSE_CODES.abnormal, 403, true)).toBe('refresh');
    expect(classifyLoss(CLOSE_CODES.abnormal, 401, false)).toBe('fatal');
    expect(classifyLoss(CLOSE_CODES.abnormal, 400, true)).toBe('fatal');
    expect(classifyLoss(CLOSE_CODES.abnormal, 404, true)).toBe('fatal');
    expect(classifyLoss(CLOSE_CODES.abnormal, 429, true)).toBe('retry');
    expect(classifyLoss(CLOSE_CODES.abnormal, 503, false)).toBe('retry');
  });

  it('agrees with the wire list of final close codes', () => {
    // Final: the fatal and refresh rows. `retry` and `recycle` (4002) both reconnect.
    const notRetried = Object.entries(CLOSE_CLASSES).filter(([, c]) => c === 'fatal' || c === 'refresh').map(([code]) => Number(code));
    expect(notRetried.sort()).toEqual([...FINAL_CLOSE_CODES].sort());
    expect(classifyLoss(CLOSE_CODES.SOCKET_RECYCLED, undefined, false)).toBe('recycle');
    expect(FINAL_CLOSE_CODES).not.toContain(CLOSE_CODES.SOCKET_RECYCLED);
  });
});

const facts = (now: number, more: Partial<RecoveryFacts> = {}): RecoveryFacts => ({
  state: 'streaming', terminal: false, finishRequested: false, socketReady: false, hasRest: false, canRefresh: false, now, ...more,
});

/** Drives SessionRecovery through one loss → retry → ready, as the session does; returns the retry. */
function lossAndBack(r: SessionRecovery, lostAt: number, upFor: number, more: Partial<RecoveryFacts> = {}): Extract<RecoveryAction, { do: 'retry' }> {
  const [first, retry] = r.lost(CLOSE_CODES.abnormal, 'cut', undefined, facts(lostAt, more));
  expect(first?.do).toBe('reconnecting');
  if (retry?.do !== 'retry') throw new Error(`expected a retry, got ${JSON.stringify(retry)}`);
  r.attemptStarted();
  r.recovered(undefined, lostAt + retry.delayMs + 10);
  void upFor;
  return retry;
}

describe('reconnect budget: starts over only after a stable connection', () => {
  const policy = (): DefaultReconnectPolicy => new DefaultReconnectPolicy({ baseMs: 100, maxMs: 3200, random: () => 0.999 });

  it('a link that drops every few seconds backs off further each time and is reported flapping', () => {
    const r = new SessionRecovery(policy(), 60_000, 10_000, 30_000);
    r.recovered(undefined, 0);
    const retries: Extract<RecoveryAction, { do: 'retry' }>[] = [];
    let t = 0;
    for (let i = 0; i < 6; i++) {
      t += 3000; // each connection lives 3 s: never stable
      const retry = lossAndBack(r, t, 3000);
      retries.push(retry);
      t += retry.delayMs;
    }
    const delays = retries.map((x) => x.delayMs);
    expect(delays[0]).toBe(99);
    for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThan(delays[i - 1] as number);
    expect(retries.map((x) => x.info.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(retries[0]?.flapping).toBeUndefined();
    expect(retries[1]?.flapping?.reason).toMatch(/flapping/);
    expect(retries[5]?.info.flapping).toBe(true);
  });

  it('recovers its budget once a connection stayed ready for the window, and says healthy', () => {
    const r = new SessionRecovery(policy(), 60_000, 10_000, 30_000);
    r.recovered(undefined, 0);
    let t = 0;
    for (let i = 0; i < 4; i++) t += 2000 + lossAndBack(r, t + 2000, 2000).delayMs;
    expect(r.steady(t + 29_000)).toBeUndefined(); // not yet
    expect(r.steady(t + 31_000)).toEqual({ state: 'healthy', reason: expect.stringMatching(/stable/) as unknown });
    const after = lossAndBack(r, t + 40_000, 0);
    expect(after.info.attempt).toBe(1);
    expect(after.delayMs).toBe(99);
    expect(after.flapping).toBeUndefined();
  });

  it('tells how long until a ready connection is stable, so a timer that ran early waits the rest', () => {
    const r = new SessionRecovery(policy(), 60_000, 10_000, 30_000);
    r.recovered(undefined, 1000);
    expect(r.stableInMs(1000)).toBe(30_000);
    expect(r.stableInMs(29_500)).toBe(1500);
    expect(r.steady(29_500)).toBeUndefined();
    expect(r.stableInMs(31_000)).toBe(0);
  });

  it('a loss noticed after the window starts over even when the steady check did not run', () => {
    const r = new SessionRecovery(policy(), 60_000, 10_000, 1000);
    r.recovered(undefined, 0);
    lossAndBack(r, 500, 0);
    lossAndBack(r, 1500, 0);
    const later = lossAndBack(r, 10_000, 0);
    expect(later.info.attempt).toBe(1);
  });

  it('refused credentials are refreshed with a provider (3 in a row at most), final without one', () => {
    const withProvider = new SessionRecovery(policy(), 60_000, 10_000);
    withProvider.recovered(undefined, 0);
    for (let i = 0; i < 3; i++) expect(withProvider.lost(CLOSE_CODES.abnormal, 'refused', 401, facts(1000 + i, { canRefresh: true }))[0]?.do).toBe('reconnecting');
    const fourth = withProvider.lost(CLOSE_CODES.abnormal, 'refused', 401, facts(2000, { canRefresh: true }))[0];
    expect(fourth?.do === 'fail' && fourth.error).toMatchObject({ code: 'REALTIME_SOCKET_REFUSED' });
    const without = new SessionRecovery(policy(), 60_000, 10_000);
    const [fail] = without.lost(CLOSE_CODES.abnormal, 'refused', 401, facts(0));
    expect(fail?.do === 'fail' && fail.error).toMatchObject({ code: 'REALTIME_SOCKET_REFUSED' });
  });
});

describe('DefaultReconnectPolicy while flapping', () => {
  it('waits at least half the ceiling, so spacing grows', () => {
    const p = new DefaultReconnectPolicy({ baseMs: 100, maxMs: 1000, random: () => 0 });
    const ctx = (attempt: number, flapping: boolean): ReconnectContext => ({ attempt, elapsedMs: 0, reason: 'x', flapping });
    expect([0, 1, 2, 3, 4].map((a) => p.nextRetryDelayMs(ctx(a, true)))).toEqual([50, 100, 200, 400, 500]);
    expect(p.nextRetryDelayMs(ctx(3, false))).toBe(0);
  });
});

describe('credentials provider', () => {
  it('checks the options and what the provider returns', async () => {
    expect(() => checkSessionOptions({ credentials: 'tok', stableWindowMs: -1 })).toThrow(/stableWindowMs.*; credentials/);
    expect(() => checkSessionOptions({ credentials: async () => ({ token: 't' }), stableWindowMs: 0 })).not.toThrow();
    await expect(freshCredentials(async () => ({ token: 'rtt_x', apiKey: 'k' }))).resolves.toEqual({ token: 'rtt_x', accessKey: 'k' });
    const bad = await freshCredentials(async () => ({}) as never).catch((e: unknown) => e);
    expect(isSoundCloneError(bad, ValidationError)).toBe(true);
    const empty = await freshCredentials(async () => ({ token: '' })).catch((e: unknown) => e);
    expect(String(empty)).toMatch(/credentials\(\)\.token/);
  });
});

describe('socket recycling (close 4002, or a standby on socket.recycle): outside the budget', () => {
  const tight = (): DefaultReconnectPolicy => new DefaultReconnectPolicy({ baseMs: 100, maxMs: 3200, maxAttempts: 1, random: () => 0.999 });

  /** One recycle through close 4002, as the session runs it: reconnecting, retry, attempt, ready. */
  function recycleAt(r: SessionRecovery, at: number): Extract<RecoveryAction, { do: 'retry' }> {
    const [first, retry] = r.lost(CLOSE_CODES.SOCKET_RECYCLED, 'socket closed 4002', undefined, facts(at));
    expect(first).toMatchObject({ do: 'reconnecting', code: CLOSE_CODES.SOCKET_RECYCLED, reason: 'recycled' });
    if (retry?.do !== 'retry') throw new Error(`expected a retry, got ${JSON.stringify(retry)}`);
    r.attemptStarted();
    expect(r.recovered(undefined, at + 5)).toBe(0);
    return retry;
  }

  it('many recycles a second apart never use the budget, never flap; a real cut then still gets its one retry', () => {
    const r = new SessionRecovery(tight(), 60_000, 10_000, 5000);
    r.recovered(undefined, 0);
    const retries = Array.from({ length: 10 }, (_, i) => recycleAt(r, 1000 * (i + 1)));
    expect(retries.map((x) => [x.delayMs, x.info.attempt, x.info.recycled, x.flapping])).toEqual(Array.from({ length: 10 }, () => [0, 0, true, undefined]));
    // The link has been up since 0: a cut at 10.5 s is a loss of a stable connection, a fresh budget.
    const cut = lossAndBack(r, 10_500, 0);
    expect(cut.info).toMatchObject({ attempt: 1, flapping: false });
    expect(cut.info.recycled).toBeUndefined();
  });

  it('the same rate of ordinary cuts exhausts maxAttempts: 1 (so the recycle test above can fail)', () => {
    const r = new SessionRecovery(tight(), 60_000, 10_000, 5000);
    r.recovered(undefined, 0);
    lossAndBack(r, 1000, 0);
    const [, gaveUp] = r.lost(CLOSE_CODES.abnormal, 'cut', undefined, facts(2000));
    expect(gaveUp).toMatchObject({ do: 'fail', error: { code: 'REALTIME_RECONNECT_EXHAUSTED' } });
  });

  it('a standby handed over (make-before-break) keeps the stable time; a failed recycle reconnect is a loss that counts', () => {
    const r = new SessionRecovery(tight(), 60_000, 10_000, 5000);
    r.recovered(undefined, 0);
    r.handoff();
    expect(r.recovered(undefined, 4000)).toBe(0);
    expect(r.stableInMs(4000)).toBe(1000); // counted from 0, not from the standby's ready
    // 4002, then the immediate reconnect fails: from there it is an ordinary outage under the policy.
    r.lost(CLOSE_CODES.SOCKET_RECYCLED, 'socket closed 4002', undefined, facts(6000));
    r.attemptStarted();
    const [, first] = r.lost(CLOSE_CODES.abnormal, 'cut', undefined, facts(6010));
    expect(first).toMatchObject({ do: 'retry', info: { attempt: 1 } });
    r.attemptStarted();
    expect(r.lost(CLOSE_CODES.abnormal, 'cut', undefined, facts(6100))[1]?.do).toBe('fail');
  });
});
