import { endianness } from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  LITTLE_ENDIAN_HOST,
  decodePcm16,
  encodePcm16,
  encodePcm16Bytes,
  encodePcm16Into,
} from '../../src/dsp/pcm16.js';
import { mulberry32 } from '../support/prng.js';
import { expectDspError } from '../support/dsp-errors.js';

const f32 = Math.fround;
const CANARY = 0xaa;

/** The convention written the obvious, slow way: round half away from zero, clamp, NaN → 0. */
function reference(x: number): number {
  if (Number.isNaN(x)) return 0;
  const v = x * 32768;
  const rounded = Math.sign(v) * Math.floor(Math.abs(v) + 0.5);
  return Math.max(-32768, Math.min(32767, rounded)) + 0; // + 0 turns -0 into 0
}

/** Little-endian int16 values read back byte by byte, independent of the host. */
function readLe(bytes: Uint8Array, byteOffset: number, count: number): number[] {
  const values: number[] = [];
  for (let i = 0; i < count; i++) {
    const u = bytes[byteOffset + 2 * i]! | (bytes[byteOffset + 2 * i + 1]! << 8);
    values.push(u >= 0x8000 ? u - 0x10000 : u);
  }
  return values;
}


/** Float32 next to x, towards +Infinity (up) or -Infinity. */
function nextFloat32(x: number, up: boolean): number {
  const bits = new Float32Array([x]);
  const u = new Int32Array(bits.buffer);
  if (x === 0) return up ? 2 ** -149 : -(2 ** -149);
  u[0] += (x > 0) === up ? 1 : -1;
  return bits[0]!;
}

/** Random float32s: ordinary samples, exact ties k/65536, and arbitrary bit patterns (NaN, ±Infinity, subnormals). */
function randomSamples(seed: number, length: number): Float32Array {
  const random = mulberry32(seed);
  const samples = new Float32Array(length);
  const bits = new Uint32Array(1);
  const asFloat = new Float32Array(bits.buffer);
  for (let i = 0; i < length; i++) {
    const kind = random();
    if (kind < 0.5) samples[i] = random() * 2.4 - 1.2;
    else if (kind < 0.8) samples[i] = (Math.floor(random() * 131074) - 65537) / 65536;
    else if (kind < 0.9) samples[i] = (random() - 0.5) * 2 ** -(Math.floor(random() * 150));
    else {
      bits[0] = Math.floor(random() * 2 ** 32);
      samples[i] = asFloat[0]!;
    }
  }
  return samples;
}

describe('PCM16 rounding and clipping', () => {
  const half = 0.5 / 32768;
  const cases: Array<[string, number, number]> = [
    ['0', 0, 0],
    ['-0', -0, 0],
    ['1.0', 1, 32767],
    ['-1.0', -1, -32768],
    ['0.5', 0.5, 16384],
    ['-0.5', -0.5, -16384],
    ['+half an LSB', half, 1],
    ['-half an LSB', -half, -1],
    ['just below +half an LSB', nextFloat32(half, false), 0],
    ['just above -half an LSB', nextFloat32(-half, true), 0],
    ['1.5 LSB', 1.5 / 32768, 2],
    ['2.5 LSB (away from zero, not to even)', 2.5 / 32768, 3],
    ['-2.5 LSB', -2.5 / 32768, -3],
    ['32766.5 LSB', 32766.5 / 32768, 32767],
    ['32767.5 LSB clamps', 32767.5 / 32768, 32767],
    ['-32767.5 LSB', -32767.5 / 32768, -32768],
    ['-32768.5 LSB clamps', -32768.5 / 32768, -32768],
    ['just below 1', nextFloat32(1, false), 32767],
    ['just above 1', nextFloat32(1, true), 32767],
    ['just above -1', nextFloat32(-1, true), -32768],
    ['just below -1', nextFloat32(-1, false), -32768],
    ['2', 2, 32767],
    ['-3', -3, -32768],
    ['float32 max', f32(3.4028234663852886e38), 32767],
    ['-float32 max', -f32(3.4028234663852886e38), -32768],
    ['+Infinity', Infinity, 32767],
    ['-Infinity', -Infinity, -32768],
    ['NaN', NaN, 0],
    ['smallest subnormal', 2 ** -149, 0],
    ['negative subnormal', -(2 ** -140), 0],
    ['smallest normal', 2 ** -126, 0],
  ];

  for (const [name, x, expected] of cases) {
    it(`${name} → ${expected}`, () => {
      expect(reference(f32(x))).toBe(expected);
      const input = new Float32Array([x]);
      const bytes = new Uint8Array(4).fill(CANARY);
      expect(encodePcm16(input, bytes, 1)).toBe(2);
      expect(readLe(bytes, 1, 1)).toEqual([expected]);
      expect(encodePcm16(input, bytes, 2)).toBe(2);
      expect(readLe(bytes, 2, 1)).toEqual([expected]);
      const native = new Int16Array(1);
      encodePcm16Into(input, 0, 1, native, 0);
      expect(native[0]).toBe(expected);
    });
  }

  it('writes little-endian bytes, low byte first', () => {
    const input = new Float32Array([0x1234 / 32768, -1, -1 / 32768, 0x7f01 / 32768, 0x80 / 32768]);
    const bytes = new Uint8Array(10);
    encodePcm16(input, bytes);
    expect([...bytes]).toEqual([0x34, 0x12, 0x00, 0x80, 0xff, 0xff, 0x01, 0x7f, 0x80, 0x00]);
    const slow = new Uint8Array(10);
    encodePcm16Bytes(input, slow);
    expect([...slow]).toEqual([...bytes]);
  });

  it('knows the host byte order', () => {
    expect(LITTLE_ENDIAN_HOST).toBe(endianness() === 'LE');
  });
});

describe('PCM16 encode paths agree', () => {
  const input = randomSamples(0x5eed, 200_003);
  const expected = Array.from(input, reference);

  it('matches the reference on 200k seeded samples (ties, subnormals, NaN, infinities)', () => {
    const bytes = new Uint8Array(2 * input.length);
    expect(encodePcm16(input, bytes)).toBe(2 * input.length);
    const got = readLe(bytes, 0, input.length);
    for (let i = 0; i < input.length; i++) {
      if (got[i] !== expected[i]) expect.fail(`sample ${i} (${input[i]}): got ${got[i]}, expected ${expected[i]}`);
    }
  });

  it('gives identical bytes on the fast path, the byte path, odd offsets and odd views', () => {
    const fast = new Uint8Array(2 * input.length + 8).fill(CANARY);
    encodePcm16(input, fast, 4);
    const slow = new Uint8Array(2 * input.length + 8).fill(CANARY);
    encodePcm16Bytes(input, slow, 4);
    expect(Buffer.compare(fast, slow)).toBe(0);

    const odd = new Uint8Array(2 * input.length + 8).fill(CANARY);
    encodePcm16(input, odd, 3);
    expect(Buffer.compare(odd.subarray(3, 3 + 2 * input.length), fast.subarray(4, 4 + 2 * input.length))).toBe(0);
    expect([...odd.subarray(0, 3), ...odd.subarray(3 + 2 * input.length)]).toEqual(new Array(8).fill(CANARY));

    // A view that starts at an odd byte of its buffer: offset 1 in the view is even in the buffer.
    const backing = new Uint8Array(2 * input.length + 8).fill(CANARY);
    const view = backing.subarray(1);
    encodePcm16(input, view, 1);
    expect(Buffer.compare(backing.subarray(2, 2 + 2 * input.length), fast.subarray(4, 4 + 2 * input.length))).toBe(0);
    expect([backing[0], backing[1], backing[2 + 2 * input.length]]).toEqual([CANARY, CANARY, CANARY]);
    // ...and offset 0 in it is odd in the buffer.
    backing.fill(CANARY);
    encodePcm16(input, view, 0);
    expect(Buffer.compare(backing.subarray(1, 1 + 2 * input.length), fast.subarray(4, 4 + 2 * input.length))).toBe(0);
    expect([backing[0], backing[1 + 2 * input.length]]).toEqual([CANARY, CANARY]);

    const native = new Int16Array(input.length + 2).fill(-7);
    expect(encodePcm16Into(input, 0, input.length, native, 1)).toBe(input.length);
    expect([native[0], native[input.length + 1]]).toEqual([-7, -7]);
    for (let i = 0; i < input.length; i++) {
      if (native[i + 1] !== expected[i]) expect.fail(`encodePcm16Into sample ${i}: got ${native[i + 1]}, expected ${expected[i]}`);
    }
  });

  it('encodes part of the input with encodePcm16Into', () => {
    const out = new Int16Array(4).fill(-7);
    expect(encodePcm16Into(input, 10, 2, out, 1)).toBe(2);
    expect([...out]).toEqual([-7, expected[10], expected[11], -7]);
    expect(encodePcm16Into(input, 10, 0, out, 4)).toBe(0);
  });

  it('stays correct when output buffers alternate (the view cache) and with shared memory and Node Buffers', () => {
    const chunk = input.subarray(0, 1000);
    const want = Buffer.alloc(2000);
    encodePcm16Bytes(chunk, want);
    const a = new Uint8Array(2000);
    const b = new Uint8Array(new SharedArrayBuffer(2004), 2, 2002);
    const pooled = Buffer.allocUnsafe(2000); // usually a slice of a shared pool, at some byteOffset
    for (let round = 0; round < 3; round++) {
      for (const out of [a, b, pooled]) {
        out.fill(round);
        encodePcm16(chunk, out);
        expect(Buffer.compare(out.subarray(0, 2000), want)).toBe(0);
      }
    }
    expect(b[2000]).toBe(2);
  });

  it('writes nothing for empty input, even at the very end of the output', () => {
    const bytes = new Uint8Array(3).fill(CANARY);
    expect(encodePcm16(new Float32Array(0), bytes, 3)).toBe(0);
    expect(encodePcm16Bytes(new Float32Array(0), bytes, 3)).toBe(0);
    expect([...bytes]).toEqual([CANARY, CANARY, CANARY]);
  });
});

describe('PCM16 round trip', () => {
  it('decode → encode is bit-exact for all 65536 values', () => {
    const bytes = new Uint8Array(2 * 65536);
    for (let s = -32768; s < 32768; s++) {
      const i = s + 32768;
      bytes[2 * i] = s & 0xff;
      bytes[2 * i + 1] = (s >> 8) & 0xff;
    }
    const floats = new Float32Array(65536);
    expect(decodePcm16(bytes, 0, 65536, floats, 0)).toBe(65536);
    for (let i = 0; i < 65536; i++) {
      if (floats[i] !== (i - 32768) / 32768) expect.fail(`decoded ${i - 32768} as ${floats[i]}`);
    }
    const again = new Uint8Array(2 * 65536);
    encodePcm16(floats, again);
    expect(Buffer.compare(again, bytes)).toBe(0);
    encodePcm16Bytes(floats, again.fill(0));
    expect(Buffer.compare(again, bytes)).toBe(0);
  });

  it('decodes from odd byte offsets into an output offset', () => {
    const bytes = new Uint8Array([CANARY, 0x34, 0x12, 0x00, 0x80, 0xff, 0xff]);
    const out = new Float32Array(5).fill(9);
    expect(decodePcm16(bytes, 1, 3, out, 1)).toBe(3);
    expect([...out]).toEqual([9, 0x1234 / 32768, -1, -1 / 32768, 9]);
  });
});

describe('PCM16 misuse', () => {
  const input = new Float32Array([0.1, 0.2, NaN, 0.3]);

  it('refuses outputs that are too small, writing nothing', () => {
    const bytes = new Uint8Array(8).fill(CANARY);
    expectDspError(() => encodePcm16(input, bytes, 1), 'DSP_OUTPUT_TOO_SMALL');
    expectDspError(() => encodePcm16Bytes(input, bytes.subarray(1)), 'DSP_OUTPUT_TOO_SMALL');
    expectDspError(() => encodePcm16(input, bytes, 9), 'DSP_OUTPUT_TOO_SMALL');
    expectDspError(() => encodePcm16Into(input, 0, 4, new Int16Array(5), 2), 'DSP_OUTPUT_TOO_SMALL');
    expectDspError(() => decodePcm16(bytes, 0, 4, new Float32Array(3)), 'DSP_OUTPUT_TOO_SMALL');
    expect([...bytes]).toEqual(new Array(8).fill(CANARY));
  });

  it('refuses wrong buffer types and bad offsets', () => {
    const bytes = new Uint8Array(16);
    expectDspError(() => encodePcm16(new Float64Array(2) as unknown as Float32Array, bytes), 'DSP_INVALID_BUFFER');
    expectDspError(() => encodePcm16([0.5] as unknown as Float32Array, bytes), 'DSP_INVALID_BUFFER');
    expectDspError(() => encodePcm16(input, new Int16Array(8) as unknown as Uint8Array), 'DSP_INVALID_BUFFER');
    expectDspError(() => encodePcm16(input, new Uint8ClampedArray(8) as unknown as Uint8Array), 'DSP_INVALID_BUFFER');
    for (const offset of [-1, 0.5, NaN, -Infinity]) {
      expectDspError(() => encodePcm16(input, bytes, offset), 'DSP_INVALID_BUFFER');
      expectDspError(() => encodePcm16Bytes(input, bytes, offset), 'DSP_INVALID_BUFFER');
    }
    expectDspError(() => encodePcm16Into(input, 2, 3, new Int16Array(8), 0), 'DSP_INVALID_BUFFER');
    expectDspError(() => encodePcm16Into(input, -1, 1, new Int16Array(8), 0), 'DSP_INVALID_BUFFER');
    expectDspError(() => encodePcm16Into(input, 0, 1, new Int16Array(8), -1), 'DSP_INVALID_BUFFER');
    expectDspError(() => encodePcm16Into(input, 0, 1, new Uint16Array(8) as unknown as Int16Array, 0), 'DSP_INVALID_BUFFER');
    expectDspError(() => decodePcm16(bytes, 15, 1, new Float32Array(1)), 'DSP_INVALID_BUFFER');
    expectDspError(() => decodePcm16(bytes, 0, 1, new Float32Array(1), 0.5), 'DSP_INVALID_BUFFER');
    expectDspError(() => decodePcm16(bytes, 0, 1, new Float64Array(1) as unknown as Float32Array), 'DSP_INVALID_BUFFER');
  });

  it("throws DSP_NON_FINITE_SAMPLE under nonFinite: 'throw', before writing anything", () => {
    const bytes = new Uint8Array(8).fill(CANARY);
    for (const encode of [encodePcm16, encodePcm16Bytes]) {
      expectDspError(() => encode(input, bytes, 0, { nonFinite: 'throw' }), 'DSP_NON_FINITE_SAMPLE');
      expectDspError(() => encode(new Float32Array([0, -Infinity]), bytes, 0, { nonFinite: 'throw' }), 'DSP_NON_FINITE_SAMPLE');
      expectDspError(() => encode(new Float32Array([Infinity]), bytes, 0, { nonFinite: 'throw' }), 'DSP_NON_FINITE_SAMPLE');
    }
    expect([...bytes]).toEqual(new Array(8).fill(CANARY));
    const native = new Int16Array(4);
    expectDspError(() => encodePcm16Into(input, 0, 4, native, 0, { nonFinite: 'throw' }), 'DSP_NON_FINITE_SAMPLE');
    expect([...native]).toEqual([0, 0, 0, 0]);
    // Only the encoded range is checked.
    expect(encodePcm16Into(input, 0, 2, native, 0, { nonFinite: 'throw' })).toBe(2);
    expect(encodePcm16(new Float32Array([1, -1, 2 ** -149]), bytes, 0, { nonFinite: 'throw' })).toBe(6);
    expect(readLe(bytes, 0, 3)).toEqual([32767, -32768, 0]);
    // The default policy, spelled out.
    expect(encodePcm16(input, bytes, 0, { nonFinite: 'clamp' })).toBe(8);
    expect(readLe(bytes, 4, 1)).toEqual([0]);
  });

  it('refuses unknown policies', () => {
    const bytes = new Uint8Array(8);
    expectDspError(() => encodePcm16(input, bytes, 0, { nonFinite: 'zero' as 'clamp' }), 'DSP_INVALID_OPTION');
    expectDspError(() => encodePcm16Into(input, 0, 1, new Int16Array(1), 0, { nonFinite: 'skip' as 'clamp' }), 'DSP_INVALID_OPTION');
  });
});
