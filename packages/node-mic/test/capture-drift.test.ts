import { ResilientMicrophone, type OpenedCapture } from '@soundclone/node-mic';
import { describe, expect, it } from 'vitest';

/**
 * Drift through the microphone's own health path (HealthTracker, the core DriftEstimator), over 60 s.
 * Substituted, and why: a minute of wall time per run is too slow for the suite, and no fake device
 * here can be told to run 1,000 ppm fast. So the device is a generator of 20 ms blocks whose clock
 * runs 1,000 ppm fast, and the clock the microphone measures against is the `now` option (the same
 * option a real capture takes, default performance.now), advanced as each block "arrives", late by a
 * seeded 0–25 ms like blocks from a pipe. Everything from the block to the health snapshot is the
 * shipping code.
 */
function fastDevice(ppm: number, seconds: number, clock: { ms: number }): OpenedCapture {
  const rate = 48_000;
  let delivered = 0;
  let seed = 12345;
  const random = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 4294967296;
  };
  return {
    format: { sampleRate: rate, channels: 1, encoding: 'pcm16' },
    label: 'fast-clock',
    get deliveredFrames() {
      return delivered;
    },
    droppedFrames: 0,
    stop: async () => undefined,
    async *[Symbol.asyncIterator]() {
      const block = new Int16Array(960).fill(1000);
      for (let frames = 960; (frames / (rate * (1 + ppm / 1e6))) * 1000 <= seconds * 1000; frames += 960) {
        clock.ms = (frames / (rate * (1 + ppm / 1e6))) * 1000 + random() * 25;
        delivered = frames;
        yield block;
      }
    },
  };
}

describe('capture drift', () => {
  it('a capture whose clock runs 1,000 ppm fast is reported at 1,000 ± 50 ppm after 60 s', async () => {
    const clock = { ms: 0 };
    const mic = await ResilientMicrophone.open('parec', undefined, {
      open: async () => fastDevice(1000, 60, clock),
      now: () => clock.ms,
      recovery: { enabled: false, pollMs: 60_000 },
    });
    const early: Array<number | null> = [];
    mic.health$.subscribe((h) => {
      if (clock.ms < 9000) early.push(h.driftPpm);
    });
    let blocks = 0;
    for await (const item of mic.items()) {
      if (item.kind === 'audio') blocks += 1;
      if (blocks === 3000) break; // 60 s of the test's clock (3,000 blocks of 20 ms, 1,000 ppm fast: 59.94 s)
    }
    const health = mic.health;
    await mic.stop();
    expect(health.capturedFrames).toBe(3000 * 960);
    expect(early.every((v) => v === null)).toBe(true); // no estimate before 10 s of data
    expect(health.driftPpm).not.toBeNull();
    if (process.env['CAPTURE_LOG'] !== undefined) process.stderr.write(`capture: drift read ${health.driftPpm!.toFixed(1)} ppm\n`);
    expect(Math.abs(health.driftPpm! - 1000)).toBeLessThan(50);
    expect(health.gaps).toBe(0);
    expect(mic.health.state).toBe('stopped');
  });
});
