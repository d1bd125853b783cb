import { describe, expect, it } from 'vitest';
import { EncodePipeline, Resampler, encodePcm16, type EncodedFrame } from '@soundclone/core';
import { noise as uniform } from '../support/prng.js';

const noise = (length: number, seed: number): Float32Array => uniform(length, seed, 0.9);

/** A stream of its own through a bare Resampler and encodePcm16: what each segment must be, byte for byte. */
function reference(input: Float32Array, inputRate: number, kernel: 'js' | 'wasm'): Buffer {
  const r = new Resampler({ inputRate, outputRate: 16000, kernel });
  const out = new Float32Array(r.maxOutputFor(input.length) + r.latencyFrames + 4);
  let n = r.process(input, out);
  n += r.flush(out, n);
  const bytes = new Uint8Array(n * 2);
  encodePcm16(out.subarray(0, n), bytes);
  return Buffer.from(bytes);
}

function pushAll(pipeline: EncodePipeline, input: Float32Array, blockFrames: number): void {
  for (let at = 0; at < input.length; at += blockFrames) pipeline.push(input.subarray(at, at + blockFrames));
}

function drain(pipeline: EncodePipeline): { bytes: Buffer; starts: number[] } {
  const parts: Buffer[] = [];
  const starts: number[] = [];
  let frame: EncodedFrame | null;
  while ((frame = pipeline.nextFrame()) !== null) {
    starts.push(frame.startSample);
    parts.push(Buffer.from(frame.bytes.subarray(frame.payloadOffset)));
  }
  return { bytes: Buffer.concat(parts), starts };
}

/** EncodePipeline.endSegment(): the realtime pause. The tail goes out, the stream goes on, counts stay exact. */
describe('EncodePipeline.endSegment', () => {
  for (const kernel of ['js', 'wasm'] as const) {
    for (const inputRate of [48000, 44100, 22050]) {
      it(`${kernel}, ${inputRate} Hz: each segment is a stream of its own, positions continue`, () => {
        const first = noise(inputRate + 1234, 3);
        const second = noise(Math.floor(inputRate / 2) + 77, 4);
        const pipeline = new EncodePipeline({ inputRate, kernel });
        pushAll(pipeline, first, 500);
        const tail = pipeline.endSegment();
        expect(tail).toBeGreaterThan(0);
        const one = Math.floor((first.length * 16000) / inputRate);
        expect(pipeline.producedSamples).toBe(one);
        expect(pipeline.flushed).toBe(false);
        pushAll(pipeline, second, 333);
        pipeline.flush();
        const two = Math.floor((second.length * 16000) / inputRate);
        expect(pipeline.producedSamples).toBe(one + two);
        const got = drain(pipeline);
        expect(got.bytes.equals(Buffer.concat([reference(first, inputRate, kernel), reference(second, inputRate, kernel)]))).toBe(true);
        got.starts.forEach((s, i) => expect(s).toBe(i * 320));
      });
    }
  }

  it('a segment ended right away or twice adds nothing; after flush() it is a no-op', () => {
    const pipeline = new EncodePipeline({ inputRate: 48000 });
    expect(pipeline.endSegment()).toBe(0);
    pipeline.push(noise(4800, 9));
    pipeline.endSegment();
    expect(pipeline.endSegment()).toBe(0);
    expect(pipeline.producedSamples).toBe(1600);
    pipeline.flush();
    expect(pipeline.endSegment()).toBe(0);
    expect(pipeline.producedSamples).toBe(1600);
  });
});
