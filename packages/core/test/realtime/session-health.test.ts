import { describe, expect, it } from 'vitest';
import { HEALTH_TIMING, HealthMeter } from '../../src/realtime/health/health-meter.js';
import { HealthWindow } from '../../src/realtime/health/health-window.js';

describe('HealthMeter: the sample clock', () => {
  it('maps a position to the wall time of the write that carried it', () => {
    const m = new HealthMeter();
    m.wrote(320, 1000);
    m.wrote(640, 1020); // within markEveryMs: the mark moves forward, keeps its time
    m.wrote(960, 1100);
    expect(m.writtenAt(1)).toBe(1000);
    expect(m.writtenAt(640)).toBe(1000);
    expect(m.writtenAt(641)).toBe(1100);
    expect(m.writtenAt(961)).toBeUndefined(); // not written yet
  });

  it('keeps a fixed ring: positions older than it get no time, memory does not grow with the session', () => {
    const m = new HealthMeter();
    const marks = HEALTH_TIMING.marks;
    for (let i = 1; i <= marks * 3; i++) m.wrote(i * 800, i * 50);
    expect(m.writtenAt(800)).toBeUndefined();
    expect(m.writtenAt(marks * 3 * 800)).toBe(marks * 3 * 50);
    expect(m.writtenAt((marks * 2 + 10) * 800)).toBe((marks * 2 + 10) * 50);
  });

  it('a line arriving 300 ms after its last sample was written reads 300 ms', () => {
    const m = new HealthMeter();
    m.wrote(16_000, 5000); // one second of audio by t=5000
    m.heard({ type: 'transcript.line', line: { id: 'l1', text: 'x', endMs: 1000 } } as never, 5300, 0, 16_000);
    const h = m.snapshot('interval', { now: 5300, state: 'streaming', stats: { unackedSamples: 0, bufferedSamples: 0, capacitySamples: 1000 } as never, framesSent: 0, bytesSent: 0 });
    expect(h.finalLatencyMs).toEqual({ last: 300, p50: 300, p95: 300, max: 300, count: 1 });
  });
});

describe('HealthWindow', () => {
  it('gives percentiles of the last values and counts them all', () => {
    const w = new HealthWindow(4);
    for (const v of [1000, 1, 2, 3, 4]) w.add(v);
    expect(w.stats()).toEqual({ last: 4, p50: 2, p95: 4, max: 4, count: 5 });
  });
});
