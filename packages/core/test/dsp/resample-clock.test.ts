import { describe, expect, it } from 'vitest';
import { designPolyphase } from '@soundclone/core/internal';
import { ResampleClock } from '../../src/dsp/resample-clock.js';
import { mulberry32 } from '../support/prng.js';

/**
 * 24 hours of simulated 44.1 kHz audio. Running the filter over 3.8·10^9 samples would
 * take minutes, so this drives the two things that decide counts and positions — the clock the
 * Resampler asks how many outputs are complete, and the phase tables its kernels walk — through the
 * whole day, output by output, and checks them against exact BigInt arithmetic.
 */
describe('ResampleClock over 24 hours of 44.1 kHz audio', () => {
  const inputRate = 44100;
  const outputRate = 16000;
  const filter = designPolyphase(inputRate, outputRate, 'best');
  const clock = new ResampleClock(filter.up, filter.down, filter.taps / 2);
  const day = 24 * 3600 * inputRate;

  it('never over- or under-counts under random chunkings, and owes exactly floor(N·16000/44100)', () => {
    const random = mulberry32(2024);
    let frames = 0;
    let produced = 0;
    const maxLag = Math.ceil((clock.latencyFrames * clock.up) / clock.down) + 1;
    let checks = 0;
    while (frames < day) {
      // Chunks from empty to about 1.5 s, so the day takes a few hundred thousand steps.
      frames = Math.min(day, frames + Math.floor(random() * 65536));
      const complete = clock.completeOutputs(frames);
      expect(complete).toBeGreaterThanOrEqual(produced);
      produced = complete;
      const exact = Number((BigInt(frames) * 16000n) / 44100n);
      if (produced > exact || exact - produced > maxLag) expect.fail(`after ${frames} frames: ${produced} vs ${exact}`);
      checks++;
    }
    expect(checks).toBeGreaterThan(100_000);
    expect(clock.totalOutputs(day)).toBe(Number((BigInt(day) * 16000n) / 44100n));
    expect(clock.totalOutputs(day)).toBe(24 * 3600 * 16000);
  });

  it('walks the phase tables for a whole day of outputs without drifting', () => {
    const { advance, nextPhase, up, down } = filter;
    const outputs = 24 * 3600 * outputRate;
    let position = 0;
    let phase = 0;
    const checkpoint = 1 << 24;
    for (let n = 0; n < outputs; n += checkpoint) {
      // Output n stands at input index floor(n·down/up), phase (n·down) mod up.
      const at = BigInt(n) * BigInt(down);
      if (position !== Number(at / BigInt(up)) || phase !== Number(at % BigInt(up))) expect.fail(`drift at output ${n}`);
      for (let i = 0, end = Math.min(checkpoint, outputs - n); i < end; i++) {
        position += advance[phase]!;
        phase = nextPhase[phase]!;
      }
    }
    expect(position).toBe(Number((BigInt(outputs) * BigInt(down)) / BigInt(up)));
    expect(phase).toBe(Number((BigInt(outputs) * BigInt(down)) % BigInt(up)));
  });
});
