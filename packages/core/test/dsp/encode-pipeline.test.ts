import { describe, expect, it } from 'vitest';
import { EncodePipeline, Resampler, encodePcm16, type EncodedFrame } from '@soundclone/core';
import { mulberry32, noise as uniform } from '../support/prng.js';

const noise = (length: number, seed: number): Float32Array => uniform(length, seed, 0.9);


interface Collected { bytes: Buffer; starts: number[]; counts: number[] }

/** Drains every frame, copying the payloads (frames are reused between calls). */
function drain(pipeline: EncodePipeline, into: Collected): void {
  let frame: EncodedFrame | null;
  while ((frame = pipeline.nextFrame()) !== null) {
    into.starts.push(frame.startSample);
    into.counts.push(frame.sampleCount);
    into.bytes = Buffer.concat([into.bytes, Buffer.from(frame.bytes.subarray(frame.payloadOffset))]);
  }
}

function encodeAll(pipeline: EncodePipeline, input: Float32Array, blockFrames: number): Collected {
  const got: Collected = { bytes: Buffer.alloc(0), starts: [], counts: [] };
  const step = blockFrames * pipeline.channels;
  for (let at = 0; at < input.length; at += step) {
    pipeline.push(input.subarray(at, at + step));
    drain(pipeline, got);
  }
  pipeline.flush();
  drain(pipeline, got);
  return got;
}

/** The same audio through a bare Resampler and encodePcm16: what the pipeline must produce byte for byte. */
function reference(input: Float32Array, inputRate: number): Buffer {
  const r = new Resampler({ inputRate, outputRate: 16000 });
  const out = new Float32Array(r.maxOutputFor(input.length) + r.latencyFrames + 4);
  let n = r.process(input, out);
  n += r.flush(out, n);
  const bytes = new Uint8Array(n * 2);
  encodePcm16(out.subarray(0, n), bytes);
  return Buffer.from(bytes);
}

describe('EncodePipeline', () => {
  for (const inputRate of [48000, 44100, 16000]) {
    it(`frames ${inputRate} Hz audio into 20 ms PCM16 frames equal to resample + encode`, () => {
      const input = noise(inputRate * 3 + 77, inputRate);
      const got = encodeAll(new EncodePipeline({ inputRate }), input, 128);
      const expected = reference(input, inputRate);
      expect(got.bytes.equals(expected)).toBe(true);
      const total = Math.floor((input.length * 16000) / inputRate);
      expect(got.counts.reduce((a, b) => a + b, 0)).toBe(total);
      // Every frame but the last is exactly 320 samples and starts where the previous ended.
      expect(got.counts.slice(0, -1).every((c) => c === 320)).toBe(true);
      got.starts.forEach((s, i) => expect(s).toBe(i * 320));
    });
  }

  it('gives the same bytes whatever the block sizes', () => {
    const input = noise(44100 * 2, 5);
    const a = encodeAll(new EncodePipeline({ inputRate: 44100 }), input, 128);
    const b = encodeAll(new EncodePipeline({ inputRate: 44100 }), input, 1000);
    const c = encodeAll(new EncodePipeline({ inputRate: 44100, maxBlockFrames: 300 }), input, 44100);
    expect(b.bytes.equals(a.bytes)).toBe(true);
    expect(c.bytes.equals(a.bytes)).toBe(true);
  });

  it('carries 16 kHz WAV samples through bit-exactly', () => {
    const random = mulberry32(9);
    const pcm = new Int16Array(16000);
    for (let i = 0; i < pcm.length; i++) pcm[i] = Math.floor(random() * 65536) - 32768;
    pcm[0] = -32768;
    pcm[1] = 32767;
    const floats = Float32Array.from(pcm, (v) => v / 32768); // how wav-decoder decodes
    const got = encodeAll(new EncodePipeline({ inputRate: 16000 }), floats, 160);
    expect(got.bytes.equals(Buffer.from(pcm.buffer))).toBe(true);
  });

  it('downmixes interleaved stereo', () => {
    const mono = noise(48000, 3);
    const stereo = new Float32Array(mono.length * 2);
    mono.forEach((v, i) => { stereo[2 * i] = v; stereo[2 * i + 1] = v; });
    const a = encodeAll(new EncodePipeline({ inputRate: 48000 }), mono, 480);
    const b = encodeAll(new EncodePipeline({ inputRate: 48000, channels: 2 }), stereo, 480);
    expect(b.bytes.equals(a.bytes)).toBe(true);
  });

  for (const headerBytes of [12, 3]) {
    it(`leaves ${headerBytes} header bytes in front of the payload`, () => {
      const input = noise(16000, 4);
      const plain = encodeAll(new EncodePipeline({ inputRate: 16000 }), input, 320);
      const pipeline = new EncodePipeline({ inputRate: 16000, headerBytes });
      pipeline.push(input);
      const frame = pipeline.nextFrame()!;
      expect(frame.payloadOffset).toBe(headerBytes);
      expect(frame.bytes.length).toBe(headerBytes + 640);
      expect(Buffer.from(frame.bytes.subarray(headerBytes)).equals(plain.bytes.subarray(0, 640))).toBe(true);
    });
  }

  it('honours frameMs and the stream start sample', () => {
    const pipeline = new EncodePipeline({ inputRate: 48000, frameMs: 10, startSample: 1_000_000 });
    pipeline.push(noise(4800, 1));
    const frame = pipeline.nextFrame()!;
    expect(frame.sampleCount).toBe(160);
    expect(frame.startSample).toBe(1_000_000);
    expect(() => new EncodePipeline({ inputRate: 44100, frameMs: 0.01 })).toThrow(expect.objectContaining({ code: 'DSP_INVALID_OPTION' }));
  });

  it('drops the oldest audio when full, reports the range, and keeps positions true', () => {
    const gaps: Array<[number, number]> = [];
    const pipeline = new EncodePipeline({ inputRate: 16000, bufferMs: 100, maxBlockFrames: 160, onOverflow: (from, to) => gaps.push([from, to]) });
    const input = noise(16000, 8);
    for (let at = 0; at < 4800; at += 160) pipeline.push(input.subarray(at, at + 160)); // 300 ms into a 100 ms buffer
    expect(pipeline.overflowSamples).toBe(3200);
    expect(gaps[0]![0]).toBe(0);
    for (let i = 1; i < gaps.length; i++) expect(gaps[i]![0]).toBe(gaps[i - 1]![1]); // contiguous
    expect(gaps.at(-1)![1]).toBe(3200);
    const frame = pipeline.nextFrame()!;
    expect(frame.startSample).toBe(3200);
    const expected = new Uint8Array(640);
    encodePcm16(input.subarray(3200, 3520), expected);
    expect(Buffer.from(frame.bytes).equals(Buffer.from(expected))).toBe(true);
  });

  it('with retain, rewinds to an acknowledged position and sends the same frames again', () => {
    const pipeline = new EncodePipeline({ inputRate: 48000, retain: true });
    pipeline.push(noise(48000, 12));
    const first: Collected = { bytes: Buffer.alloc(0), starts: [], counts: [] };
    drain(pipeline, first);
    pipeline.acknowledge(3200);
    pipeline.rewind(3200);
    const again: Collected = { bytes: Buffer.alloc(0), starts: [], counts: [] };
    drain(pipeline, again);
    expect(again.starts[0]).toBe(3200);
    expect(again.bytes.equals(first.bytes.subarray(3200 * 2))).toBe(true);
    expect(() => pipeline.rewind(0)).toThrow(expect.objectContaining({ code: 'DSP_INVALID_OPTION' }));
  });

  it('refuses push() after flush() until reset()', () => {
    const pipeline = new EncodePipeline({ inputRate: 48000 });
    pipeline.push(noise(480, 1));
    pipeline.flush();
    expect(() => pipeline.push(noise(480, 1))).toThrow(expect.objectContaining({ code: 'DSP_INVALID_STATE' }));
    pipeline.reset();
    expect(pipeline.push(noise(4800, 1))).toBeGreaterThan(0);
  });
});
