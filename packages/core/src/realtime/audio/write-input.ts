import { DspError } from '../../errors/dsp-error.js';
import { RealtimeError } from '../../errors/realtime-error.js';

/**
 * What write() and writePcm16() accept, checked before a sample is taken: a wrong type must never reach
 * the server as audio (a Node Buffer of PCM16 bytes read as one sample per byte would be charged as
 * speech). The type is read from the typed array's own tag, not `instanceof`, so blocks made in another
 * realm (a worklet, an iframe, a test's VM context) pass; a Buffer's tag is Uint8Array and does not.
 */
export function checkFloatBlock(block: unknown, channels: number): void {
  const tag = typedArrayTag(block);
  if (tag !== 'Float32Array' && tag !== 'Int16Array') {
    throw new DspError('DSP_INVALID_BUFFER', `write() takes a Float32Array or an Int16Array, got ${describe(block)}${tag === 'Uint8Array' ? ' (PCM16 bytes: view them as new Int16Array(buffer.buffer, buffer.byteOffset, buffer.byteLength / 2))' : ''}`);
  }
  if ((block as Float32Array | Int16Array).length % channels !== 0) {
    throw new DspError('DSP_INVALID_BUFFER', `write() takes whole frames of ${channels} interleaved channels, got ${(block as Float32Array).length} samples`);
  }
}

export function checkPcm16Block(samples: unknown): void {
  const tag = typedArrayTag(samples);
  if (tag !== 'Int16Array') {
    throw new DspError('DSP_INVALID_BUFFER', `writePcm16() takes an Int16Array of 16 kHz mono PCM16, got ${describe(samples)}${tag === 'Uint8Array' ? ' (PCM16 bytes: view them as new Int16Array(buffer.buffer, buffer.byteOffset, buffer.byteLength / 2); an odd byte count is not PCM16)' : ''}`);
  }
}

/**
 * One block larger than the retained audio could never be kept whole: the session keeps only
 * bufferMs of unacknowledged audio, and nothing of a block written at once has been acknowledged
 * yet, so its start would be dropped before it was sent. Refused whole instead, so nothing is lost
 * and the writer learns to write smaller blocks (or to wait with whenWritable()).
 */
export function checkBlockFits(call: 'write' | 'writePcm16', outputSamples: number, keptSamples: number, outputRate: number): void {
  if (outputSamples <= keptSamples) return;
  throw new RealtimeError(
    'REALTIME_WRITE_TOO_LARGE',
    `${call}() was given ${seconds(outputSamples, outputRate)} s of audio at once, more than the ${seconds(keptSamples, outputRate)} s the session keeps until the server acknowledges it (bufferMs): write smaller blocks and await session.whenWritable() between them, or raise bufferMs`,
  );
}

/**
 * A block from another realm viewed, without a copy, as this realm's typed array: the resampler
 * checks its input with `instanceof`. A block of this realm is returned as it is (the hot path).
 */
export function ownRealm<T extends Float32Array | Int16Array>(block: T): T {
  if (block instanceof Float32Array || block instanceof Int16Array) return block;
  const foreign = block as ArrayBufferView & { readonly length: number };
  const View = typedArrayTag(block) === 'Float32Array' ? Float32Array : Int16Array;
  return new View(foreign.buffer as ArrayBuffer, foreign.byteOffset, foreign.length) as T;
}

function typedArrayTag(value: unknown): string | undefined {
  if (!ArrayBuffer.isView(value)) return undefined;
  return (value as { [Symbol.toStringTag]?: string })[Symbol.toStringTag];
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  const tag = typedArrayTag(value);
  if (tag !== undefined) return `a ${tag}`;
  if (Array.isArray(value)) return 'an Array';
  return `a ${typeof value}`;
}

function seconds(samples: number, rate: number): string {
  return (samples / rate).toFixed(2);
}
