import { describe, expect, it } from 'vitest';
import { DspError, Resampler, SUPPORTED_RATES } from '@soundclone/core';
import { mulberry32 as createPrng, noise } from '../support/prng.js';

const PAIRS: Array<[number, number]> = [
  [48000, 16000], [44100, 16000], [8000, 16000], [11025, 96000], [96000, 8000], [22050, 44100], [88200, 11025], [16000, 16000],
];


/** Feeds `input` in chunks of the given sizes, checking the count after every call, then flushes. */
function runChunked(resampler: Resampler, input: Float32Array, sizes: () => number): Float32Array {
  const { up, down, channels } = resampler;
  const frames = input.length / channels;
  const out = new Float32Array(Math.floor((frames * up) / down) + 8);
  let at = 0;
  let produced = 0;
  // Outputs still owed are those whose window reaches past the input: at most latency·up/down + 1.
  const maxLag = Math.ceil((resampler.latencyFrames * up) / down) + 1;
  while (at < frames) {
    const n = Math.min(sizes(), frames - at);
    produced += resampler.process(input.subarray(at * channels, (at + n) * channels), out, produced);
    at += n;
    const exact = Math.floor((at * up) / down);
    expect(produced).toBeLessThanOrEqual(exact);
    expect(exact - produced).toBeLessThanOrEqual(maxLag);
    expect(produced).toBe(resampler.outputFrames);
  }
  produced += resampler.flush(out, produced);
  expect(produced).toBe(Math.floor((frames * up) / down));
  return out.subarray(0, produced);
}

describe('Resampler counts and chunking', () => {
  for (const [inputRate, outputRate] of PAIRS) {
    it(`${inputRate} → ${outputRate}: exact counts and bit-identical output under random chunkings`, () => {
      const input = noise(inputRate + 12345, inputRate ^ outputRate);
      const random = createPrng(7 + inputRate);
      const reference = runChunked(new Resampler({ inputRate, outputRate }), input, () => input.length);
      const chunkings: Array<() => number> = [
        () => 128,
        () => Math.floor(random() * 5000),               // includes empty chunks
        () => (random() < 0.2 ? 0 : 1 + Math.floor(random() * 7)),
      ];
      for (const sizes of chunkings) {
        const output = runChunked(new Resampler({ inputRate, outputRate }), input, sizes);
        expect(Buffer.from(output.buffer, output.byteOffset, output.byteLength).equals(
          Buffer.from(reference.buffer, reference.byteOffset, reference.byteLength))).toBe(true);
      }
    });
  }

  it('counts exactly for every supported pair and odd lengths', () => {
    for (const inputRate of SUPPORTED_RATES) {
      for (const outputRate of SUPPORTED_RATES) {
        for (const length of [0, 1, 2, 441, 997]) {
          const r = new Resampler({ inputRate, outputRate, quality: 'fast' });
          const out = new Float32Array(r.maxOutputFor(length) + r.pendingFlush + 16);
          let n = r.process(new Float32Array(length), out);
          expect(r.pendingFlush).toBe(Math.floor((length * r.up) / r.down) - n);
          n += r.flush(out, n);
          expect(n).toBe(Math.floor((length * outputRate) / inputRate));
        }
      }
    }
  });

  it('reset() starts over and reproduces the same output', () => {
    const r = new Resampler({ inputRate: 44100, outputRate: 16000 });
    const input = noise(10000, 3);
    const a = runChunked(r, input, () => 333).slice();
    r.reset();
    expect(r.inputFrames).toBe(0);
    const b = runChunked(r, input, () => 1000);
    expect(b).toEqual(a);
  });
});

describe('Resampler channels and sample policy', () => {
  it('downmixes interleaved channels to their mean', () => {
    const mono = noise(9600, 11);
    const stereo = new Float32Array(mono.length * 2);
    const opposite = new Float32Array(mono.length * 2);
    for (let i = 0; i < mono.length; i++) {
      stereo[2 * i] = stereo[2 * i + 1] = mono[i];
      opposite[2 * i] = mono[i];
      opposite[2 * i + 1] = -mono[i];
    }
    const a = runChunked(new Resampler({ inputRate: 48000, outputRate: 16000 }), mono, () => 480);
    const b = runChunked(new Resampler({ inputRate: 48000, outputRate: 16000, channels: 2 }), stereo, () => 480);
    expect(b).toEqual(a);
    const silent = runChunked(new Resampler({ inputRate: 48000, outputRate: 16000, channels: 2 }), opposite, () => 480);
    expect(silent.every((v) => v === 0)).toBe(true);
  });

  it('rejects a block that is not a whole number of frames', () => {
    const r = new Resampler({ inputRate: 48000, outputRate: 16000, channels: 2 });
    expect(() => r.process(new Float32Array(3), new Float32Array(10))).toThrow(DspError);
  });

  it("replaces non-finite samples by zero and counts them under 'zero'", () => {
    const input = noise(4800, 5);
    const dirty = input.slice();
    dirty[100] = Number.NaN;
    dirty[200] = Number.POSITIVE_INFINITY;
    dirty[300] = Number.NEGATIVE_INFINITY;
    const clean = input.slice();
    clean[100] = clean[200] = clean[300] = 0;
    const r = new Resampler({ inputRate: 48000, outputRate: 16000 });
    const a = runChunked(r, dirty, () => 480);
    expect(r.nonFiniteSamples).toBe(3);
    expect(a.every(Number.isFinite)).toBe(true);
    expect(a).toEqual(runChunked(new Resampler({ inputRate: 48000, outputRate: 16000 }), clean, () => 480));
  });

  it("throws DSP_NON_FINITE_SAMPLE under 'throw' and leaves the state as it was", () => {
    const r = new Resampler({ inputRate: 48000, outputRate: 16000, nonFinite: 'throw' });
    const out = new Float32Array(1000);
    r.process(noise(480, 1), out);
    const before = { input: r.inputFrames, output: r.outputFrames };
    const bad = noise(480, 2);
    bad[7] = Number.NaN;
    expect(() => r.process(bad, out)).toThrow(expect.objectContaining({ code: 'DSP_NON_FINITE_SAMPLE', name: 'DspError' }));
    expect({ input: r.inputFrames, output: r.outputFrames }).toEqual(before);
  });

  it('passes 16 kHz through untouched', () => {
    const input = noise(16000, 9);
    const r = new Resampler({ inputRate: 16000, outputRate: 16000 });
    expect(r.latencyFrames).toBe(0);
    expect(runChunked(r, input, () => 100)).toEqual(input);
  });
});

describe('Resampler misuse', () => {
  it('refuses unsupported rates and options with typed errors', () => {
    expect(() => new Resampler({ inputRate: 44000, outputRate: 16000 })).toThrow(expect.objectContaining({ code: 'DSP_UNSUPPORTED_RATE' }));
    expect(() => new Resampler({ inputRate: 48000, outputRate: 12345 })).toThrow(expect.objectContaining({ code: 'DSP_UNSUPPORTED_RATE' }));
    expect(() => new Resampler({ inputRate: 48000, outputRate: 16000, channels: 0 })).toThrow(expect.objectContaining({ code: 'DSP_INVALID_OPTION' }));
    expect(() => new Resampler({ inputRate: 48000, outputRate: 16000, quality: 'ultra' as never })).toThrow(expect.objectContaining({ code: 'DSP_INVALID_OPTION' }));
    expect(() => new Resampler({ inputRate: 48000, outputRate: 16000, nonFinite: 'ignore' as never })).toThrow(expect.objectContaining({ code: 'DSP_INVALID_OPTION' }));
  });

  it('refuses wrong buffer types', () => {
    const r = new Resampler({ inputRate: 48000, outputRate: 16000 });
    expect(() => r.process(new Float64Array(10) as never, new Float32Array(10))).toThrow(expect.objectContaining({ code: 'DSP_INVALID_BUFFER' }));
    expect(() => r.process(new Float32Array(10), new Int16Array(10) as never)).toThrow(expect.objectContaining({ code: 'DSP_INVALID_BUFFER' }));
    expect(() => r.process(new Float32Array(10), new Float32Array(10), -1)).toThrow(expect.objectContaining({ code: 'DSP_INVALID_BUFFER' }));
  });

  it('refuses an output buffer that is too small before consuming any input', () => {
    const r = new Resampler({ inputRate: 48000, outputRate: 16000 });
    const input = noise(4800, 4);
    expect(() => r.process(input, new Float32Array(10))).toThrow(expect.objectContaining({ code: 'DSP_OUTPUT_TOO_SMALL' }));
    expect(r.inputFrames).toBe(0);
    const out = new Float32Array(r.maxOutputFor(input.length));
    expect(r.process(input, out)).toBeGreaterThan(0);
  });

  it('refuses process() after flush() until reset()', () => {
    const r = new Resampler({ inputRate: 48000, outputRate: 16000 });
    const out = new Float32Array(2000);
    r.process(noise(480, 1), out);
    r.flush(out);
    expect(r.flush(out)).toBe(0);
    expect(() => r.process(noise(480, 1), out)).toThrow(expect.objectContaining({ code: 'DSP_INVALID_STATE' }));
    r.reset();
    expect(() => r.process(noise(480, 1), out)).not.toThrow();
  });
});
