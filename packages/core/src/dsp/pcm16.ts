import { DspError } from '../errors/dsp-error.js';

/**
 * Float32 ⇄ signed 16-bit PCM, little-endian on the wire.
 *
 * Convention: s = clamp(roundHalfAwayFromZero(x · 32768), -32768, 32767), so 1.0 → 32767 and
 * -1.0 → -32768. It is the exact inverse of the usual decode s / 32768 (decodePcm16 below, and the
 * WAV decoder), so 16-bit audio survives decode → encode bit-exactly: every s / 32768 is a float32
 * that scales back to exactly s. Non-finite input under the default 'clamp' policy: NaN → 0,
 * +Infinity → 32767, -Infinity → -32768; under 'throw' the call raises DSP_NON_FINITE_SAMPLE and
 * writes nothing.
 *
 * Allocation: none per call. A module-level cache keeps the last output ArrayBuffer and one Int16Array
 * over it, recreated only when a different buffer comes in (so a caller cycling through many buffers
 * allocates one view per switch); the cache keeps that last buffer alive.
 */

/** 'clamp' (default): NaN → 0, ±Infinity → the extremes. 'throw': DSP_NON_FINITE_SAMPLE. */
export type Pcm16NonFinite = 'clamp' | 'throw';

export interface Pcm16Options {
  nonFinite?: Pcm16NonFinite;
}

/** True on little-endian hosts (all current browsers and Node platforms); the Int16Array fast path needs it. */
export const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

let cachedBuffer: ArrayBufferLike | null = null;
let cachedView: Int16Array = new Int16Array(0);

/**
 * Encodes all of `input` as 16-bit little-endian PCM into `output` from `byteOffset` (any offset,
 * odd ones included). Returns the bytes written, 2 · input.length.
 */
export function encodePcm16(input: Float32Array, output: Uint8Array, byteOffset = 0, options?: Pcm16Options): number {
  const bytes = checkEncode(input, output, byteOffset, options);
  const at = output.byteOffset + byteOffset;
  if (LITTLE_ENDIAN_HOST && (at & 1) === 0) {
    // at >>> 1 keeps the index a small integer where at / 2 would be a float division.
    const start = at >>> 1;
    quantizeInto(input, 0, input.length, int16View(output.buffer, start + input.length), start);
  } else {
    quantizeBytes(input, output, byteOffset);
  }
  return bytes;
}

/**
 * encodePcm16() that always takes the byte-by-byte path, the one big-endian hosts and odd offsets
 * use; exported so tests can check it matches the fast path on any host.
 */
export function encodePcm16Bytes(input: Float32Array, output: Uint8Array, byteOffset = 0, options?: Pcm16Options): number {
  const bytes = checkEncode(input, output, byteOffset, options);
  quantizeBytes(input, output, byteOffset);
  return bytes;
}

/**
 * Encodes input[inputStart, inputStart + count) as native int16 values into output from
 * outputStart, such as straight into an int16 SampleRing's storage via writeSegments(). Returns count.
 */
export function encodePcm16Into(
  input: Float32Array,
  inputStart: number,
  count: number,
  output: Int16Array,
  outputStart: number,
  options?: Pcm16Options,
): number {
  if (!(input instanceof Float32Array)) throw new DspError('DSP_INVALID_BUFFER', 'input must be a Float32Array');
  if (!(output instanceof Int16Array)) throw new DspError('DSP_INVALID_BUFFER', 'output must be an Int16Array');
  if (!isIndex(inputStart) || !isIndex(count) || inputStart + count > input.length) {
    throw new DspError('DSP_INVALID_BUFFER', `input range [${inputStart}, ${inputStart + count}) is outside an array of ${input.length}`);
  }
  if (!isIndex(outputStart)) throw new DspError('DSP_INVALID_BUFFER', `bad output offset ${outputStart}`);
  if (outputStart + count > output.length) {
    throw new DspError('DSP_OUTPUT_TOO_SMALL', `output of ${output.length} cannot take ${count} samples at ${outputStart}`);
  }
  if (checkPolicy(options)) assertFinite(input, inputStart, count);
  quantizeInto(input, inputStart, count, output, outputStart);
  return count;
}

/**
 * Decodes `sampleCount` 16-bit little-endian samples from input at byteOffset (any offset) as
 * s / 32768 into output at outputOffset. Returns sampleCount.
 */
export function decodePcm16(
  input: Uint8Array,
  byteOffset: number,
  sampleCount: number,
  output: Float32Array,
  outputOffset = 0,
): number {
  if (!(input instanceof Uint8Array)) throw new DspError('DSP_INVALID_BUFFER', 'input must be a Uint8Array');
  if (!(output instanceof Float32Array)) throw new DspError('DSP_INVALID_BUFFER', 'output must be a Float32Array');
  if (!isIndex(byteOffset) || !isIndex(sampleCount) || byteOffset + 2 * sampleCount > input.length) {
    throw new DspError('DSP_INVALID_BUFFER', `${sampleCount} samples at byte ${byteOffset} are outside an input of ${input.length} bytes`);
  }
  if (!isIndex(outputOffset)) throw new DspError('DSP_INVALID_BUFFER', `bad output offset ${outputOffset}`);
  if (outputOffset + sampleCount > output.length) {
    throw new DspError('DSP_OUTPUT_TOO_SMALL', `output of ${output.length} cannot take ${sampleCount} samples at ${outputOffset}`);
  }
  for (let i = 0, o = byteOffset; i < sampleCount; i++, o += 2) {
    // Shift the high byte into the sign bit and back to sign-extend.
    output[outputOffset + i] = (((input[o] | (input[o + 1] << 8)) << 16) >> 16) * (1 / 32768);
  }
  return sampleCount;
}

// The rounding, written out in both loops below.
//
//   v = x · 32768, u = v + 32768.5
//   0 < u < 65536    s = (u | 0) - 32768, then one fix-up for negative ties
//   u ≥ 65536        s = 32767    (v ≥ 32767.5, +Infinity)
//   u ≤ 0            s = -32768   (v ≤ -32768.5, -Infinity)
//   otherwise        s = 0        (NaN fails both comparisons: no extra test)
//
// In range, u is positive, so `| 0` is floor and s = floor(v + 0.5): round half up. That differs from
// half away from zero only at negative ties (v = -0.5 gives 0, not -1), caught by s - v === 0.5,
// which is almost never true and so almost free. Offsetting instead of branching on the sign matters:
// a noise floor flips sign at random, and a mispredicted sign branch costs more than the rest of the
// loop (measured: about twice as fast on low-level noise, the same on speech). Exactness: u is exact
// for |v| ≥ 2^-13 (v is a float32 scaled by 2^15, 24 significant bits, and the sum spans ≤ 52 bits);
// for smaller v it rounds to within 2^-13 of 32768.5, which floors to 32768 all the same. Math.round
// would be 2.5× slower and rounds halves up. Results: 0.5 → 1, -0.5 → -1, 0.4999… → 0, -0 → 0,
// subnormals → 0, 32767.5 and above → 32767.

/** One sample: small enough for V8 to inline into both loops below. */
function quantize(x: number): number {
  const v = x * 32768;
  const u = v + 32768.5;
  if (u > 0) {
    if (u < 65536) {
      const s = (u | 0) - 32768;
      return s - v === 0.5 && s <= 0 ? s - 1 : s;
    }
    return 32767;
  }
  return u <= 0 ? -32768 : 0;
}

function quantizeInto(input: Float32Array, inputStart: number, count: number, output: Int16Array, outputStart: number): void {
  for (let i = 0; i < count; i++) {
    output[outputStart + i] = quantize(input[inputStart + i]);
  }
}

function quantizeBytes(input: Float32Array, output: Uint8Array, byteOffset: number): void {
  const count = input.length;
  for (let i = 0, o = byteOffset; i < count; i++, o += 2) {
    const s = quantize(input[i]);
    // Uint8Array stores take the value mod 256: low byte first, then the high byte.
    output[o] = s;
    output[o + 1] = s >> 8;
  }
}

/** An Int16Array over all of `buffer` covering index `end - 1`, from the one-entry cache. */
function int16View(buffer: ArrayBufferLike, end: number): Int16Array {
  if (buffer !== cachedBuffer || end > cachedView.length) {
    cachedView = new Int16Array(buffer, 0, Math.floor(buffer.byteLength / 2));
    cachedBuffer = buffer;
  }
  return cachedView;
}

function checkEncode(input: Float32Array, output: Uint8Array, byteOffset: number, options: Pcm16Options | undefined): number {
  if (!(input instanceof Float32Array)) throw new DspError('DSP_INVALID_BUFFER', 'input must be a Float32Array');
  if (!(output instanceof Uint8Array)) throw new DspError('DSP_INVALID_BUFFER', 'output must be a Uint8Array');
  if (!isIndex(byteOffset)) throw new DspError('DSP_INVALID_BUFFER', `byteOffset must be a non-negative integer, got ${byteOffset}`);
  const bytes = 2 * input.length;
  if (byteOffset + bytes > output.length) {
    throw new DspError('DSP_OUTPUT_TOO_SMALL', `${bytes} bytes at offset ${byteOffset} do not fit an output of ${output.length}`);
  }
  if (checkPolicy(options)) assertFinite(input, 0, input.length);
  return bytes;
}

/** Validates the options; true under the 'throw' policy. */
function checkPolicy(options: Pcm16Options | undefined): boolean {
  if (options === undefined) return false;
  const policy = options.nonFinite;
  if (policy === undefined || policy === 'clamp') return false;
  if (policy === 'throw') return true;
  throw new DspError('DSP_INVALID_OPTION', `nonFinite must be 'clamp' or 'throw', got ${String(policy)}`);
}

/** A separate pass so that the encode loops stay branch-light and a throw writes nothing. */
function assertFinite(input: Float32Array, start: number, count: number): void {
  for (let i = start; i < start + count; i++) {
    const x = input[i];
    // x - x is 0 for every finite x and NaN for NaN and ±Infinity.
    if (x - x !== 0) throw new DspError('DSP_NON_FINITE_SAMPLE', `sample ${i} is ${x}`);
  }
}

function isIndex(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}
