import { describe, expect, it } from 'vitest';
import { ACK_WATCH, ackWatchTiming, type AckWatchTiming } from '../../src/realtime/watch/ack-watch-options.js';
import { ValidationError } from '../../src/errors/client-errors.js';
import { isSoundCloneError } from '../../src/errors/guards.js';
import { AckWatchdog, healthReport, type AckView } from '../../src/realtime/watch/ack-watchdog.js';
import { SocketWatch } from '../../src/realtime/watch/socket-watch.js';
import type { SessionState } from '../../src/realtime/session-state.js';

/** A watchdog and the view the session would hand it, the clock in the test's hands. */
function setup(timing: AckWatchTiming = ACK_WATCH) {
  const dog = new AckWatchdog(timing);
  const view = { now: 0, ready: true, state: 'streaming' as SessionState, inFlightSamples: 3200, acked: 0 };
  const at = (now: number, change: Partial<AckView> = {}) => {
    Object.assign(view, change, { now });
    return dog.check(view).map((d) => d.do === 'health' ? `health:${d.state}` : d.do);
  };
  return { dog, at };
}

describe('AckWatchdog: acks stopping while audio flows', () => {
  it('degraded and a probe after probeAfterMs of silence; replaced when the probe is unanswered for probeTimeoutMs', () => {
    const { at } = setup();
    expect(at(0)).toEqual([]);
    expect(at(ACK_WATCH.probeAfterMs - 1)).toEqual([]);
    expect(at(ACK_WATCH.probeAfterMs)).toEqual(['health:degraded', 'probe']);
    expect(at(ACK_WATCH.probeAfterMs + ACK_WATCH.probeTimeoutMs - 1)).toEqual([]);
    expect(at(ACK_WATCH.probeAfterMs + ACK_WATCH.probeTimeoutMs)).toEqual(['replace']);
  });

  it('an answered probe keeps the socket (probing again every probeEveryMs); acks moving again say healthy', () => {
    const { dog, at } = setup();
    at(0);
    dog.answered('ack-999', 100); // no probe outstanding: nothing to answer
    const decisions = dog.check({ now: 500, ready: true, state: 'streaming', inFlightSamples: 3200, acked: 0 });
    const probe = decisions.find((d) => d.do === 'probe');
    expect(probe).toBeDefined();
    dog.answered('ack-999', 600); // another id: not this probe's answer
    dog.answered(probe?.do === 'probe' ? probe.id : undefined, 700);
    expect(at(1600)).toEqual([]);
    expect(at(1700)).toEqual(['probe']); // answered at 700: again probeEveryMs later
    expect(at(2699)).toEqual([]);
    expect(at(2700, { acked: 3200, inFlightSamples: 1600 })).toEqual(['health:healthy']);
    expect(at(2800)).toEqual([]);
  });

  it('a probe answered by another id does not count', () => {
    const { dog, at } = setup();
    at(0);
    expect(at(500)).toEqual(['health:degraded', 'probe']);
    dog.answered('ack-999', 600);
    expect(at(1500)).toEqual(['replace']);
  });

  it('watches only a ready socket in a state that is acknowledged, with audio in flight', () => {
    const { at } = setup();
    for (const state of ['paused', 'idle', 'reconnecting', 'connecting'] as const) {
      expect(at(0, { state })).toEqual([]);
      expect(at(5000, { state })).toEqual([]);
    }
    expect(at(0, { state: 'streaming', ready: false })).toEqual([]);
    expect(at(5000)).toEqual([]);
    expect(at(10_000, { ready: true, inFlightSamples: 0 })).toEqual([]);
    expect(at(20_000)).toEqual([]);
    // Audio in flight again: the silence counts from the first check that saw it, not from the last ack.
    expect(at(30_000, { inFlightSamples: 320 })).toEqual([]);
    expect(at(30_499)).toEqual([]);
    expect(at(30_500)).toEqual(['health:degraded', 'probe']);
  });

  it('stays degraded across a socket loss; healthy once everything sent is acknowledged on the new socket', () => {
    const { dog, at } = setup();
    at(0);
    expect(at(600)).toEqual(['health:degraded', 'probe']);
    expect(at(700, { ready: false })).toEqual([]);
    dog.reset();
    expect(at(800, { ready: true, state: 'streaming' })).toEqual([]);
    expect(at(900, { inFlightSamples: 0, acked: 3200 })).toEqual(['health:healthy']);
    expect(dog.degraded).toBe(false);
  });

  it('reports the audio waiting on the server in ms of 16 kHz audio', () => {
    const stats = { unackedSamples: 32_000, bufferedSamples: 48_000 } as Parameters<typeof healthReport>[1];
    expect(healthReport({ state: 'degraded', reason: 'r' }, stats)).toEqual({ state: 'degraded', reason: 'r', unackedMs: 2000, bufferedMs: 3000 });
  });
});

/** A slow link for `ms`: acks advance `carry` samples per 100 ms tick while the window (32,000) stays full. */
function slowLink(at: (now: number, change?: Partial<AckView>) => string[], ms: number, carry: number): number {
  let acked = 0;
  for (let now = 0; now <= ms; now += 100, acked += carry) expect(at(now, { acked, inFlightSamples: 32_000 })).toEqual([]);
  return acked - carry;
}

describe('AckWatchdog: the probe waits for the audio queued ahead of it', () => {
  it('on a slow link with the window queued, a late pong is waited for, and keeps the socket', () => {
    const { dog, at } = setup();
    const acked = slowLink(at, 5000, 800); // 8 samples/ms: the 32,000 in flight need 4 s
    expect(at(5500, { acked })).toEqual(['health:degraded', 'probe']);
    // probeTimeoutMs alone would replace it now; the backlog (32,000 less the 0.5 s drained) needs ~3.5 s more.
    expect(at(6500, { acked })).toEqual([]);
    expect(at(8900, { acked })).toEqual([]);
    dog.answered('ack-1', 9000);
    expect(at(9100, { acked })).toEqual([]);
    expect(at(10_000, { acked })).toEqual(['probe']); // answered: probed again probeEveryMs later
  });

  it('on the same link a probe that never comes back is replaced once the backlog and probeTimeoutMs have passed', () => {
    const { at } = setup();
    const acked = slowLink(at, 5000, 800);
    expect(at(5500, { acked })).toEqual(['health:degraded', 'probe']);
    let replacedAt = 0;
    for (let now = 5600; now < 20_000 && replacedAt === 0; now += 100) if (at(now, { acked }).includes('replace')) replacedAt = now;
    // (32,000 − 8 × 500) / 8 = 3.5 s of backlog (less the estimate's 150 ms resolution), plus the 1 s probeTimeoutMs.
    expect(replacedAt - 5500).toBeGreaterThanOrEqual(4300);
    expect(replacedAt - 5500).toBeLessThanOrEqual(4500);
  });

  it('maxBacklogWaitMs caps the wait (0: probeTimeoutMs alone)', () => {
    for (const [maxBacklogWaitMs, expected] of [[0, 1000], [2000, 3000]] as const) {
      const { at } = setup({ ...ACK_WATCH, maxBacklogWaitMs });
      const acked = slowLink(at, 5000, 800);
      expect(at(5500, { acked })).toEqual(['health:degraded', 'probe']);
      expect(at(5500 + expected - 1, { acked })).toEqual([]);
      expect(at(5500 + expected, { acked })[0]).toBe('replace');
    }
  });

  it('a stream the path kept up with has almost nothing queued: a half-open socket is replaced as fast as ever', () => {
    const { at } = setup();
    let acked = 0;
    for (let now = 0; now <= 3000; now += 100, acked += 1600) at(now, { acked, inFlightSamples: 800 });
    acked -= 1600;
    // The acks stop; the audio keeps going out at 16 samples/ms into the dead socket.
    for (let now = 3100; now < 3500; now += 100) expect(at(now, { acked, inFlightSamples: 800 + (now - 3000) * 16 })).toEqual([]);
    expect(at(3500, { acked, inFlightSamples: 8800 })).toEqual(['health:degraded', 'probe']);
    expect(at(4499, { acked, inFlightSamples: 24_800 })).toEqual([]);
    expect(at(4600, { acked, inFlightSamples: 26_400 })[0]).toBe('replace');
  });

  it('custom timings are used as given', () => {
    const { at } = setup({ ...ACK_WATCH, degradedAfterMs: 200, probeAfterMs: 300, probeTimeoutMs: 400 });
    expect(at(0)).toEqual([]);
    expect(at(200)).toEqual(['health:degraded']);
    expect(at(300)).toEqual(['probe']);
    expect(at(699)).toEqual([]);
    expect(at(700)).toEqual(['replace']);
  });
});

describe('ackWatchTiming: the ackWatch option', () => {
  it('absent: the defaults; false: off; a partial object: the rest from the defaults', () => {
    expect(ackWatchTiming(undefined)).toBe(ACK_WATCH);
    expect(ackWatchTiming(false)).toBeNull();
    expect(ackWatchTiming({ probeTimeoutMs: 2500, maxBacklogWaitMs: 0 })).toEqual({ ...ACK_WATCH, probeTimeoutMs: 2500, maxBacklogWaitMs: 0 });
    expect(ACK_WATCH).toEqual({ degradedAfterMs: 500, probeAfterMs: 500, probeTimeoutMs: 1000, probeEveryMs: 1000, maxBacklogWaitMs: 10_000 });
  });

  it('every broken rule at once, by field', () => {
    const violations = (option: unknown): Array<{ field: string; rule: string }> => {
      try {
        ackWatchTiming(option);
      } catch (caught) {
        if (isSoundCloneError(caught, ValidationError)) return [...caught.violations];
        throw caught;
      }
      return [];
    };
    expect(violations({ degradedAfterMs: 0, probeAfterMs: '500', probeTimeoutMs: Number.POSITIVE_INFINITY, probeEveryMs: -1, maxBacklogWaitMs: -1, probeTimeout: 1 }).map((v) => v.field)).toEqual([
      'ackWatch.probeTimeout',
      'ackWatch.degradedAfterMs',
      'ackWatch.probeAfterMs',
      'ackWatch.probeTimeoutMs',
      'ackWatch.probeEveryMs',
      'ackWatch.maxBacklogWaitMs',
    ]);
    expect(violations({ probeAfterMs: '500' })[0]?.rule).toBe('must be a finite number of ms above 0, got "500"');
    for (const bad of [true, null, 1000, 'off', []]) expect(violations(bad).map((v) => v.field)).toEqual(['ackWatch']);
    expect(violations({ maxBacklogWaitMs: 0 })).toEqual([]);
  });
});

describe('SocketWatch: the ackWatch option', () => {
  const view = (now: number): AckView => ({ now, ready: true, state: 'streaming', inFlightSamples: 3200, acked: 0 });

  it('false: acks silent while sending bring no probe and no degraded; the heartbeat still drops a silent socket', () => {
    const watch = new SocketWatch(false);
    watch.opened(0, 10_000);
    watch.ready(0, 25_000);
    for (let now = 0; now < 25_000; now += 100) expect(watch.check(view(now))).toEqual([]);
    expect(watch.check(view(25_000))).toEqual([{ do: 'drop', code: 4408, reason: 'heartbeat timeout' }]);
  });

  it('the default probes and drops a silent socket long before the heartbeat', () => {
    const watch = new SocketWatch();
    watch.ready(0, 25_000);
    const seen = [0, 500, 1500].map((now) => watch.check(view(now)).map((d) => d.do));
    expect(seen).toEqual([[], ['health', 'probe'], ['drop']]);
  });

  it('the watch ticks a fifth of the shortest ack timing (at most every 100 ms); an invalid option throws', () => {
    const fine = new SocketWatch({ probeAfterMs: 100, degradedAfterMs: 100, probeTimeoutMs: 200 });
    fine.ready(0, 25_000);
    expect(fine.tickMs).toBe(20);
    const plain = new SocketWatch();
    plain.ready(0, 25_000);
    expect(plain.tickMs).toBe(100);
    expect(() => new SocketWatch({ probeTimeoutMs: 0 })).toThrow(/ackWatch\.probeTimeoutMs/);
  });
});
