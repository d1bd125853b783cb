import { describe, expect, it } from 'vitest';
import { ACK_WATCH } from '../../src/realtime/ack-watch-options.js';
import { AckWatchdog, healthReport, type AckView } from '../../src/realtime/ack-watchdog.js';
import type { SessionState } from '../../src/realtime/session-state.js';

/** A watchdog and the view the session would hand it, the clock in the test's hands. */
function setup() {
  const dog = new AckWatchdog();
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
