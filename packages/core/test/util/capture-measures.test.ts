import { describe, expect, it } from 'vitest';
import { CaptureTimeline, DriftEstimator, StarvationDetector, blockLevel } from '../../src/util/capture-measures.js';
import { mulberry32 } from '../support/prng.js';

/**
 * A simulated capture: blocks of `blockFrames` from a device whose clock runs `ppm` fast against the
 * test's clock, each seen late by a seeded random 0..jitterMs (scheduling, pipes: never early).
 * Calls `on(framesSoFar, arrivalMs)` per block until `seconds` of the test's clock have passed.
 */
function simulate(rate: number, ppm: number, seconds: number, jitterMs: number, seed: number, on: (frames: number, nowMs: number) => void): void {
  const random = mulberry32(seed);
  const blockFrames = Math.round(rate / 50);
  const trueRate = rate * (1 + ppm / 1e6);
  for (let frames = blockFrames; ; frames += blockFrames) {
    const producedMs = (frames / trueRate) * 1000;
    if (producedMs > seconds * 1000) return;
    on(frames, producedMs + random() * jitterMs);
  }
}

describe('DriftEstimator', () => {
  it('reads a device 1,000 ppm fast as 1,000 ± 50 ppm after 60 s, with up to 30 ms of arrival jitter', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const drift = new DriftEstimator({ sampleRate: 48_000 });
      let last: number | null = null;
      simulate(48_000, 1000, 60, 30, seed, (frames, now) => (last = drift.add(frames, now)));
      expect(last).not.toBeNull();
      expect(Math.abs(last! - 1000)).toBeLessThan(50);
    }
  });

  it('reads slow and exact clocks too, and says nothing before its minimum span', () => {
    const slow = new DriftEstimator({ sampleRate: 16_000 });
    const exact = new DriftEstimator({ sampleRate: 16_000 });
    const early: Array<number | null> = [];
    simulate(16_000, -2500, 60, 20, 9, (frames, now) => {
      const v = slow.add(frames, now);
      if (now < 9_000) early.push(v);
    });
    simulate(16_000, 0, 60, 20, 10, (frames, now) => exact.add(frames, now));
    expect(early.every((v) => v === null)).toBe(true);
    expect(Math.abs(slow.ppm! + 2500)).toBeLessThan(50);
    expect(Math.abs(exact.ppm!)).toBeLessThan(50);
  });

  it('forgets the old device on reset(), and keeps a bounded window', () => {
    const drift = new DriftEstimator({ sampleRate: 48_000, windowMs: 20_000 });
    simulate(48_000, 5000, 30, 0, 1, (frames, now) => drift.add(frames, now));
    expect(Math.abs(drift.ppm! - 5000)).toBeLessThan(5);
    drift.reset();
    expect(drift.ppm).toBeNull();
    // The window slides: 30 s at +5,000 ppm then 30 s at 0 reads ~0 with a 20 s window.
    let offset = 0;
    simulate(48_000, 0, 30, 0, 1, (frames, now) => {
      offset = frames;
      drift.add(frames, now);
    });
    expect(offset).toBeGreaterThan(0);
    expect(Math.abs(drift.ppm!)).toBeLessThan(5);
  });

  it('refuses nonsense options with a typed error', () => {
    expect(() => new DriftEstimator({ sampleRate: 0 })).toThrow(expect.objectContaining({ code: 'DSP_INVALID_OPTION' }));
    expect(() => new DriftEstimator({ sampleRate: 16_000, windowMs: Number.NaN })).toThrow(expect.objectContaining({ code: 'DSP_INVALID_OPTION' }));
  });
});

describe('StarvationDetector', () => {
  it('ignores ordinary jitter, reports an episode once when audio falls behind, and its end', () => {
    const detector = new StarvationDetector({ sampleRate: 16_000, thresholdMs: 300 });
    const random = mulberry32(7);
    let frames = 0;
    const readings = [];
    // 5 s on time with up to 40 ms of lateness: never starved.
    for (let t = 20; t <= 5000; t += 20) {
      frames += 320;
      const r = detector.check(frames, t + random() * 40);
      expect(r.starved).toBe(false);
      expect(r.behindMs).toBeLessThan(41);
    }
    // Then the source feeds at half speed for 2 s: 500 ms behind by the end, starved past 300 ms.
    for (let t = 5020; t <= 7000; t += 20) {
      frames += 160;
      readings.push({ t, ...detector.check(frames, t) });
    }
    const start = readings.filter((r) => r.started);
    expect(start).toHaveLength(1);
    expect(start[0]!.t).toBeGreaterThan(5600);
    expect(start[0]!.t).toBeLessThan(5660); // 300 ms behind at half speed: 600 ms after it began
    // 2 s at half speed: 1 s behind (less the few ms the earliest jittered block was late).
    expect(readings.at(-1)!.behindMs).toBeGreaterThan(995);
    expect(readings.at(-1)!.behindMs).toBeLessThanOrEqual(1000);
    // A timer reading with no audio at all grows too.
    expect(detector.check(frames, 7500).behindMs).toBeGreaterThan(1400);
    // The source catches up (a burst): the episode ends.
    frames += 16_000 * 1.5;
    const back = detector.check(frames, 7520);
    expect(back).toMatchObject({ starved: false, ended: true });
    detector.rebase(frames, 7520);
    expect(detector.check(frames + 320, 7540).behindMs).toBe(0);
  });
});

describe('CaptureTimeline and blockLevel', () => {
  it('places gaps after every earlier one, in 16 kHz samples from the clock', () => {
    const timeline = new CaptureTimeline();
    expect(timeline.gap('device-lost', 32_000, 2000, 2500)).toEqual({ cause: 'device-lost', atSample: 32_000, from: 32_000, to: 40_000, fromMs: 2000, toMs: 2500 });
    expect(timeline.gap('suspended', 48_000, 4000, 4100, 1000)).toEqual({ cause: 'suspended', atSample: 48_000, from: 56_000, to: 57_000, fromMs: 4000, toMs: 4100 });
    expect(timeline.missingSamples).toBe(9000);
  });

  it('measures dBFS of Int16 and Float32 blocks', () => {
    expect(blockLevel(new Int16Array([16_384, -16_384]))).toEqual({ rmsDb: 20 * Math.log10(0.5), peakDb: 20 * Math.log10(0.5) });
    expect(blockLevel(new Float32Array([0, 1, 0, -1])).peakDb).toBe(0);
    expect(blockLevel(new Float32Array(4)).rmsDb).toBe(Number.NEGATIVE_INFINITY);
  });
});
