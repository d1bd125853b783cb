import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DspError, Resampler, type ResamplerOptions } from '@soundclone/core';
import { assemble, bytesPath, MAX_MODULE_BYTES, render, watPath } from '../../scripts/build-wasm.mjs';
import { FIR_SIMD_BASE64 } from '../../src/dsp/wasm/fir-simd-bytes.js';
import { decodeBase64 } from '../../src/dsp/wasm/fir-simd-module.js';
import { mulberry32 as prng, noise } from '../support/prng.js';



/** Feeds `input` in chunks, then flushes; returns everything produced. */
function runChunked(resampler: Resampler, input: Float32Array, sizes: () => number): Float32Array {
  const frames = input.length / resampler.channels;
  const out = new Float32Array(Math.floor((frames * resampler.up) / resampler.down) + 8);
  let at = 0;
  let produced = 0;
  while (at < input.length) {
    const n = Math.min(sizes() * resampler.channels, input.length - at);
    produced += resampler.process(input.subarray(at, at + n), out, produced);
    at += n;
    expect(produced).toBe(resampler.outputFrames);
  }
  produced += resampler.flush(out, produced);
  return out.subarray(0, produced);
}

function maxAbsDifference(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i]! - b[i]!));
  return d;
}

const PAIRS: Array<[number, number]> = [
  [48000, 16000], [44100, 16000], [96000, 8000], [8000, 16000], [11025, 96000], [22050, 44100], [88200, 11025], [32000, 24000],
];

describe('WebAssembly FIR kernel', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('the checked-in module is fir-simd.wat assembled, small enough to compile synchronously', async () => {
    const assembled = await assemble(readFileSync(watPath, 'utf8'));
    const checkedIn = decodeBase64(FIR_SIMD_BASE64);
    expect(Array.from(checkedIn)).toEqual(Array.from(assembled));
    expect(readFileSync(bytesPath, 'utf8')).toBe(render(assembled));
    expect(assembled.length).toBeLessThan(MAX_MODULE_BYTES);
    expect(WebAssembly.validate(checkedIn)).toBe(true);
  });

  it("'auto' runs the wasm kernel here and 'js' forces the TypeScript one", () => {
    expect(new Resampler({ inputRate: 48000, outputRate: 16000 }).kernel).toBe('wasm');
    expect(new Resampler({ inputRate: 44100, outputRate: 16000, kernel: 'wasm' }).kernel).toBe('wasm');
    expect(new Resampler({ inputRate: 44100, outputRate: 16000, kernel: 'js' }).kernel).toBe('js');
    // Same rate is a copy, whatever was asked.
    expect(new Resampler({ inputRate: 16000, outputRate: 16000, kernel: 'wasm' }).kernel).toBe('js');
    expect(() => new Resampler({ inputRate: 48000, outputRate: 16000, kernel: 'simd' as never })).toThrow(DspError);
  });

  it("without WebAssembly, 'auto' falls back to js and 'wasm' throws DSP_INVALID_OPTION", () => {
    vi.stubGlobal('WebAssembly', undefined);
    expect(new Resampler({ inputRate: 48000, outputRate: 16000 }).kernel).toBe('js');
    let error: unknown;
    try {
      new Resampler({ inputRate: 48000, outputRate: 16000, kernel: 'wasm' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DspError);
    expect((error as DspError).code).toBe('DSP_INVALID_OPTION');
  });

  // f32x4 accumulation against the JS kernel's f64: over every pair above, both presets, full-scale
  // noise, the largest difference measured was 2.4e-7 (2 ulp at 1.0, -132 dBFS; the same holds over
  // all 180 supported rate pairs × presets). The bound leaves 2x margin.
  it('agrees with the JS kernel to within 5e-7 on full-scale noise', () => {
    let worst = 0;
    for (const [inputRate, outputRate] of PAIRS) {
      for (const quality of ['best', 'fast'] as const) {
        const input = noise(5000, inputRate + outputRate);
        const options: ResamplerOptions = { inputRate, outputRate, quality };
        const js = runChunked(new Resampler({ ...options, kernel: 'js' }), input, () => 128);
        const wasm = runChunked(new Resampler({ ...options, kernel: 'wasm' }), input, () => 128);
        expect(js.length).toBe(Math.floor((input.length * outputRate) / inputRate));
        worst = Math.max(worst, maxAbsDifference(js, wasm));
      }
    }
    expect(worst).toBeLessThan(5e-7);
  });

  // Both kernels: the JS one computes two outputs per pass for integer decimation, one at the end
  // of a call, and each output must come out the same either way.
  it.each(['wasm', 'js'] as const)('%s: bit-identical under random chunkings, with exact counts after flush', (kernel) => {
    for (const [inputRate, outputRate] of PAIRS) {
      const input = noise(inputRate / 4 + 777, inputRate ^ outputRate);
      const expected = Math.floor((input.length * outputRate) / inputRate);
      // A small block makes long chunks go through the history in slices.
      const make = (): Resampler => new Resampler({ inputRate, outputRate, kernel, blockFrames: 512 });
      const reference = runChunked(make(), input, () => input.length);
      expect(reference.length).toBe(expected);
      const random = prng(inputRate + 3 * outputRate);
      const chunkings: Array<() => number> = [
        () => 128,
        () => Math.floor(random() * 2000), // includes empty chunks
        () => (random() < 0.2 ? 0 : 1 + Math.floor(random() * 7)),
      ];
      for (const sizes of chunkings) {
        const output = runChunked(make(), input, sizes);
        expect(output.length).toBe(expected);
        expect(maxAbsDifference(output, reference)).toBe(0);
        expect(Buffer.from(output.buffer, output.byteOffset, output.byteLength).equals(
          Buffer.from(reference.buffer, reference.byteOffset, reference.byteLength))).toBe(true);
      }
    }
  });

  it('produces more outputs in one call than its scratch area holds (8 kHz → 96 kHz, 20 000 frames)', () => {
    const input = noise(20000, 5);
    const options: ResamplerOptions = { inputRate: 8000, outputRate: 96000, blockFrames: 16384 };
    const js = runChunked(new Resampler({ ...options, kernel: 'js' }), input, () => input.length);
    const wasm = runChunked(new Resampler({ ...options, kernel: 'wasm' }), input, () => input.length);
    expect(wasm.length).toBe(240000);
    expect(maxAbsDifference(js, wasm)).toBeLessThan(5e-7);
  });

  it('downmixes and zeroes non-finite samples like the JS kernel', () => {
    const stereo = noise(2 * 6000, 9);
    const mono = noise(6000, 10);
    for (const i of [3, 100, 101, 2047, 5999]) {
      stereo[2 * i] = Number.NaN;
      mono[i] = i % 2 === 0 ? Number.POSITIVE_INFINITY : Number.NaN;
    }
    for (const [input, channels] of [[stereo, 2], [mono, 1]] as const) {
      const results = (['js', 'wasm'] as const).map((kernel) => {
        const resampler = new Resampler({ inputRate: 44100, outputRate: 16000, channels, kernel });
        // 128 frames per call goes through the memcpy + sanitize path; odd sizes through the loop.
        const random = prng(channels);
        const output = runChunked(resampler, input, () => (random() < 0.5 ? 128 : 1 + Math.floor(random() * 300)));
        return { output, bad: resampler.nonFiniteSamples };
      });
      expect(results[0]!.bad).toBe(5);
      expect(results[1]!.bad).toBe(5);
      for (const { output } of results) expect(output.every(Number.isFinite)).toBe(true);
      expect(maxAbsDifference(results[0]!.output, results[1]!.output)).toBeLessThan(5e-7);
    }
  });

  it('reset() starts over with the same output', () => {
    const input = noise(9000, 11);
    const resampler = new Resampler({ inputRate: 44100, outputRate: 16000, kernel: 'wasm' });
    const first = runChunked(resampler, input, () => 128).slice();
    resampler.reset();
    const second = runChunked(resampler, input, () => 333);
    expect(maxAbsDifference(first, second)).toBe(0);
  });
});
