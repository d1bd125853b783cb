import { describe, expect, it } from 'vitest';
import { isTestingError } from '@soundclone/testing';
import { VirtualClock } from '../src/time/virtual-clock.js';
import { durationMs } from '../src/time/duration.js';

/** The clock alone, without a service: its timers are what the service arms through ServerOptions.clock. */
describe('VirtualClock', () => {
  it('runs timers in the order they are due, armed order on a tie, each at its own time, never twice', async () => {
    const clock = new VirtualClock({ mode: 'virtual', startAt: 1_000 });
    const ran: Array<[string, number]> = [];
    clock.setTimer(300, () => ran.push(['c', clock.now()]));
    clock.setTimer(100, () => ran.push(['a', clock.now()]));
    clock.setTimer(100, () => ran.push(['b', clock.now()]));
    const cancel = clock.setTimer(200, () => ran.push(['cancelled', clock.now()]));
    cancel();
    await clock.advance(99);
    expect(ran).toEqual([]);
    await clock.advance('201ms');
    expect(ran).toEqual([['a', 1_100], ['b', 1_100], ['c', 1_300]]);
    await clock.advance('1h');
    expect(ran).toHaveLength(3);
    expect(clock.now()).toBe(1_000 + 300 + 3_600_000);
    expect(clock.pendingTimers).toBe(0);
  });

  it('runs a timer armed by another timer when the clock reaches it within the same advance', async () => {
    const clock = new VirtualClock({ mode: 'virtual', startAt: 0 });
    const ran: number[] = [];
    const every = (): void => {
      ran.push(clock.now());
      clock.setTimer(1_000, every);
    };
    clock.setTimer(1_000, every);
    await clock.advance('5.5s');
    expect(ran).toEqual([1_000, 2_000, 3_000, 4_000, 5_000]);
  });

  it('moves what runs alongside by the same steps, up to each timer before it runs', async () => {
    const steps: number[] = [];
    const clock = new VirtualClock({ mode: 'virtual', startAt: 0, alongside: (ms) => steps.push(ms) });
    const seen: number[] = [];
    clock.setTimer(250, () => seen.push(steps.reduce((a, b) => a + b, 0)));
    await clock.advance(1_000);
    expect(steps).toEqual([250, 750]);
    expect(seen).toEqual([250]);
  });

  it('driven by audio: moves with the furthest received position, and only forward', async () => {
    const clock = new VirtualClock({ mode: 'audio', startAt: 0 });
    const ran: number[] = [];
    clock.setTimer(1_000, () => ran.push(clock.now()));
    clock.heard(8_000n); // half a second
    expect(clock.now()).toBe(500);
    clock.heard(4_000n); // another session, behind: no change
    expect(clock.now()).toBe(500);
    clock.heard(32_000n); // two seconds: the timer due at one second runs on the way
    await clock.advance(0);
    expect(ran).toEqual([1_000]);
    expect(clock.now()).toBe(2_000);
  });

  it('keeps nothing after stop(): timers dropped, advance refused', async () => {
    const clock = new VirtualClock({ mode: 'virtual', startAt: 0 });
    let ran = false;
    clock.setTimer(10, () => (ran = true));
    clock.stop();
    expect(clock.pendingTimers).toBe(0);
    await expect(clock.advance(100)).rejects.toSatisfy((e) => isTestingError(e) && e.code === 'TESTING_CLOSED');
    expect(ran).toBe(false);
  });

  it('reads durations as milliseconds or unit strings, largest unit first', () => {
    expect(durationMs(250, 'x')).toBe(250);
    expect(durationMs('1h', 'x')).toBe(3_600_000);
    expect(durationMs('9m59s', 'x')).toBe(599_000);
    expect(durationMs('1.5s', 'x')).toBe(1_500);
    expect(durationMs('1h30m250ms', 'x')).toBe(5_400_250);
    for (const bad of ['', '1 hour', '30s1m', '5', '-1s', 'ms']) {
      expect(() => durationMs(bad, 'x'), bad).toThrow(expect.objectContaining({ code: 'TESTING_INVALID_TIME' }));
    }
  });
});
