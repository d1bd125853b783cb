import { DspError } from '../errors/dsp-error.js';
import type { SampleKind } from './ring-types.js';

/** Argument checks and the allocation-free copy the ring uses; misuse throws DspError, runtime conditions never do. */

export const MAX_CAPACITY = 2 ** 30;

/** Copies without allocating: set() when the whole source goes, an indexed loop otherwise (subarray would allocate). */
export function copy(src: Float32Array | Int16Array, srcStart: number, dst: Float32Array | Int16Array, dstStart: number, n: number): void {
  if (srcStart === 0 && n === src.length) {
    dst.set(src, dstStart);
    return;
  }
  for (let i = 0; i < n; i++) dst[dstStart + i] = src[srcStart + i];
}

export function isSharedBuffer(buffer: unknown): buffer is SharedArrayBuffer {
  return typeof SharedArrayBuffer === 'function' && buffer instanceof SharedArrayBuffer;
}

export function isCount(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}

export function checkKind(kind: unknown): asserts kind is SampleKind {
  if (kind !== 'float32' && kind !== 'int16') {
    throw new DspError('DSP_INVALID_OPTION', `kind must be 'float32' or 'int16', got ${String(kind)}`);
  }
}

export function checkCapacity(capacity: unknown): asserts capacity is number {
  if (typeof capacity !== 'number' || !Number.isInteger(capacity) || capacity < 1 || capacity > MAX_CAPACITY) {
    throw new DspError('DSP_INVALID_OPTION', `capacity must be an integer in 1..2^30, got ${String(capacity)}`);
  }
}

export function checkPosition(position: unknown, name: string): asserts position is number {
  if (typeof position !== 'number' || !Number.isSafeInteger(position) || position < 0) {
    throw new DspError('DSP_INVALID_OPTION', `${name} must be a non-negative safe integer, got ${String(position)}`);
  }
}

export function checkMax(max: number): void {
  if (!(max >= 0) || (max !== Infinity && !Number.isInteger(max))) {
    throw new DspError('DSP_INVALID_OPTION', `max must be a non-negative integer or Infinity, got ${max}`);
  }
}

export function checkSource(length: number, offset: number, count: number): void {
  if (!isCount(offset) || !isCount(count) || offset + count > length) {
    throw new DspError('DSP_INVALID_BUFFER', `source range [${offset}, ${offset + count}) is outside an array of ${length}`);
  }
}

export function checkTarget(length: number, offset: number, count: number): void {
  if (!isCount(offset) || !isCount(count)) {
    throw new DspError('DSP_INVALID_BUFFER', `bad destination offset ${offset} or count ${count}`);
  }
  if (offset + count > length) {
    throw new DspError('DSP_OUTPUT_TOO_SMALL', `destination of ${length} cannot take ${count} samples at ${offset}`);
  }
}
