import { afterEach, describe, expect, it, vi } from 'vitest';
import { Resampler, SampleRing, encodePcm16, type ResamplerKernel } from '@soundclone/core';
import { encodePcm16Bytes, encodePcm16Into } from '../../src/dsp/pcm16.js';
import { RING_REGION, type RingRegion } from '../../src/dsp/sample-ring.js';
import { firSimdModule } from '../../src/dsp/wasm/fir-simd-module.js';
import { loud, mulberry32 } from '../support/prng.js';
import { expectDspError } from '../support/dsp-errors.js';

// The fused PCM16 path: the wasm kernel's quantizer (fir-simd.wat `pcm16`) and Resampler.processPcm16
// (FrameEncoder writes through it straight into its frame slots: frame-encoder.test.ts). Everything
// here must give the bytes of encodePcm16 applied to the float output.

/** Samples that stress the quantizer: ties and their neighbours at every scale, extremes, non-finite, subnormals, random bits. */
function hardSamples(seed: number, randomCount: number): Float32Array {
  const values: number[] = [];
  const near = (x: number): void => {
    const f = new Float32Array([x]);
    const u = new Int32Array(f.buffer);
    values.push(f[0]!);
    u[0]! += 1;
    values.push(f[0]!);
    u[0]! -= 2;
    values.push(f[0]!);
  };
  for (let k = -32770; k <= 32770; k++) {
    near((k + 0.5) / 32768);
    near(k / 32768);
  }
  // |v| = 0.5 - 2^-25 is where adding 0.5 in float32 would round up to 1.
  for (const v of [0.5 - 2 ** -25, 0.5 - 2 ** -24, 0.5, 1.5 - 2 ** -23, 32767.5, 32766.5, 32768, 40000, 1e30]) {
    near(v / 32768);
    near(-v / 32768);
  }
  values.push(0, -0, Infinity, -Infinity, NaN, 2 ** -149, -(2 ** -149), 2 ** -126, 3.4e38, -3.4e38);
  const random = mulberry32(seed);
  const bits = new Uint32Array(randomCount);
  for (let i = 0; i < randomCount; i++) bits[i] = Math.floor(random() * 2 ** 32);
  return Float32Array.from([...values, ...new Float32Array(bits.buffer)]);
}

function expected16(input: Float32Array): Int16Array {
  const out = new Int16Array(input.length);
  encodePcm16Into(input, 0, input.length, out, 0);
  return out;
}

describe('the wasm PCM16 quantizer', () => {
  it('equals encodePcm16 on ties, near-ties, extremes, non-finite values and random bit patterns, in every tail length', () => {
    const module = firSimdModule();
    expect(module).not.toBeNull();
    const input = hardSamples(0xf00d, 300_000);
    const memory = new WebAssembly.Memory({ initial: 64, maximum: 64 });
    const { exports } = new WebAssembly.Instance(module!, { env: { memory } });
    const pcm16 = exports['pcm16'] as (src: number, dst: number, n: number) => void;
    const src = new Float32Array(memory.buffer, 0, input.length);
    src.set(input);
    const dstBase = 4 * input.length + 16;
    const dst = new Int16Array(memory.buffer, dstBase, input.length + 8);
    const want = expected16(input);
    // Calls of every length from 1 to 19: vector passes, the four-wide step and the scalar tail.
    for (let chunk = 1; chunk <= 19; chunk += 1) {
      dst.fill(-12345);
      for (let at = 0; at < input.length; at += chunk) {
        const n = Math.min(chunk, input.length - at);
        pcm16(4 * at, dstBase + 2 * at, n);
      }
      for (let i = 0; i < input.length; i++) {
        if (dst[i] !== want[i]) expect.fail(`chunk ${chunk}, sample ${i} (${input[i]}): got ${dst[i]}, expected ${want[i]}`);
      }
      // Nothing written past the end.
      expect([...dst.subarray(input.length)]).toEqual(new Array(8).fill(-12345));
    }
  });
});

describe('encodePcm16 on blocks the wasm quantizer takes', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.resetModules();
  });

  it('gives the bytes of the JS byte path for every block size around its limits, at even and odd offsets', () => {
    const input = hardSamples(0xbeef, 100_000);
    const sizes = [1, 15, 16, 17, 23, 128, 320, 1000, 8191, 8192, 8193, 9000];
    for (const size of sizes) {
      for (const offset of [0, 1, 6]) {
        const fast = new Uint8Array(2 * size + 8).fill(0xaa);
        const slow = new Uint8Array(2 * size + 8).fill(0xaa);
        for (let at = 0; at + size <= input.length; at += size * 7 + 3) {
          const block = input.subarray(at, at + size);
          expect(encodePcm16(block, fast, offset)).toBe(2 * size);
          encodePcm16Bytes(block, slow, offset);
          if (!Buffer.from(fast).equals(Buffer.from(slow))) expect.fail(`size ${size}, offset ${offset}, block at ${at} differs`);
        }
      }
    }
  });

  it('falls back to the JS loop where WebAssembly is missing, with the same bytes', async () => {
    const input = hardSamples(0xcafe, 5000).subarray(0, 8192);
    const expected = new Uint8Array(2 * input.length);
    encodePcm16Bytes(input, expected);
    vi.stubGlobal('WebAssembly', undefined);
    vi.resetModules();
    const fresh = await import('../../src/dsp/pcm16.js');
    const got = new Uint8Array(2 * input.length);
    fresh.encodePcm16(input, got);
    expect(Buffer.from(got).equals(Buffer.from(expected))).toBe(true);
  });
});

describe('Resampler.processPcm16', () => {
  const cases: Array<[number, number, ResamplerKernel]> = [
    [48000, 16000, 'wasm'], [44100, 16000, 'wasm'], [8000, 96000, 'wasm'], [48000, 16000, 'js'], [44100, 16000, 'js'], [16000, 16000, 'auto'],
  ];
  for (const [inputRate, outputRate, kernel] of cases) {
    it(`${inputRate} → ${outputRate} (${kernel}): equals encodePcm16 of process(), in wasm memory and outside it, under random chunkings`, () => {
      const input = loud(inputRate, inputRate + outputRate);
      const floats = new Resampler({ inputRate, outputRate, kernel });
      const floatOut = new Float32Array(floats.maxOutputFor(input.length) + floats.latencyFrames + 8);
      let n = floats.process(input, floatOut);
      n += floats.flush(floatOut, n);
      const want = expected16(floatOut.subarray(0, n));

      const reserveBytes = 2 * (n + 64);
      const inMemory = new Resampler({ inputRate, outputRate, kernel, reserveBytes });
      const outside = new Resampler({ inputRate, outputRate, kernel });
      expect(inMemory.reservedRegion === null).toBe(inMemory.kernel === 'js');
      const region = inMemory.reservedRegion;
      const a = region === null ? new Int16Array(n + 64) : new Int16Array(region.buffer, region.byteOffset, n + 64);
      const b = new Int16Array(n + 64);
      a.fill(-7);
      b.fill(-7);
      const random = mulberry32(n);
      let at = 0;
      let wa = 0;
      let wb = 0;
      while (at < input.length) {
        const size = Math.min(1 + Math.floor(random() * 700), input.length - at);
        const block = input.subarray(at, at + size);
        wa += inMemory.processPcm16(block, a, wa);
        wb += outside.processPcm16(block, b, wb);
        at += size;
      }
      wa += inMemory.flushPcm16(a, wa);
      wb += outside.flushPcm16(b, wb);
      expect(wa).toBe(n);
      expect(wb).toBe(n);
      expect(a.subarray(0, n)).toEqual(want);
      expect(b.subarray(0, n)).toEqual(want);
      expect([...a.subarray(n)]).toEqual(new Array(64).fill(-7));
      expect([...b.subarray(n)]).toEqual(new Array(64).fill(-7));
    });
  }

  it('checks its output like process()', () => {
    const r = new Resampler({ inputRate: 48000, outputRate: 16000 });
    expectDspError(() => r.processPcm16(new Float32Array(4800), new Float32Array(1600) as unknown as Int16Array), 'DSP_INVALID_BUFFER');
    expectDspError(() => r.processPcm16(new Float32Array(4800), new Int16Array(10)), 'DSP_OUTPUT_TOO_SMALL');
    expectDspError(() => r.processPcm16(new Float32Array(4800), new Int16Array(2000), -1), 'DSP_INVALID_BUFFER');
    expectDspError(() => r.process(new Float32Array(4800), new Int16Array(2000) as unknown as Float32Array), 'DSP_INVALID_BUFFER');
    expect(r.outputFrames).toBe(0);
    expectDspError(() => new Resampler({ inputRate: 48000, outputRate: 16000, reserveBytes: -1 }), 'DSP_INVALID_OPTION');
    expectDspError(() => new Resampler({ inputRate: 48000, outputRate: 16000, reserveBytes: 1.5 }), 'DSP_INVALID_OPTION');
  });
});

describe('SampleRing in a region of a larger buffer (package-internal)', () => {
  it('lives at its offset, touches nothing around it, and attaches through its handle', () => {
    const buffer = new ArrayBuffer(4096);
    const bytes = new Uint8Array(buffer).fill(0xaa);
    const region: RingRegion = { buffer, byteOffset: 256 };
    const options = { kind: 'int16' as const, capacity: 100, [RING_REGION]: region };
    const ring = new SampleRing(options);
    expect(ring.storage.byteOffset).toBe(256 + 192);
    expect(ring.handle.byteOffset).toBe(256);
    const other = SampleRing.attach(ring.handle);
    expect(ring.write(Int16Array.from({ length: 150 }, (_, i) => i))).toBe(100);
    expect(ring.overflowSamples).toBe(50);
    const out = new Int16Array(100);
    expect(other.read(out)).toBe(100);
    expect(out[99]).toBe(99);
    expect(bytes.subarray(0, 256).every((b) => b === 0xaa)).toBe(true);
    expect(bytes.subarray(256 + SampleRing.byteLengthFor('int16', 100)).every((b) => b === 0xaa)).toBe(true);
    expectDspError(() => new SampleRing({ kind: 'int16', capacity: 2000, [RING_REGION]: region } as typeof options), 'DSP_INVALID_BUFFER');
    expectDspError(() => new SampleRing({ kind: 'int16', capacity: 10, [RING_REGION]: { buffer, byteOffset: 2 } } as typeof options), 'DSP_INVALID_BUFFER');
    expectDspError(() => new SampleRing({ kind: 'int16', capacity: 10, shared: true, [RING_REGION]: region } as typeof options), 'DSP_INVALID_OPTION');
  });
});
