import { describe, expect, it } from 'vitest';
import { FrameEncoder, encodePcm16, type EncodedFrame, type ResamplerKernel } from '@soundclone/core';
import { decodeFrameHeader } from '../../src/protocol.js';
import { offlinePcm16 } from '../support/offline-encode.js';
import { loud, mulberry32, noise as uniform } from '../support/prng.js';
import { expectDspError } from '../support/dsp-errors.js';

// FrameEncoder: the encode path RealtimeSocketSession.write() runs (its outbox holds one), used here
// on its own, as a benchmark harness would. Every frame must carry the bytes of a bare Resampler plus
// encodePcm16 over the whole stream, whatever the block sizes, kernel, slot wrap or overflow.

const noise = (length: number, seed: number): Float32Array => uniform(length, seed, 0.9);

interface Collected { pcm: number[]; starts: number[]; counts: number[] }

const collected = (): Collected => ({ pcm: [], starts: [], counts: [] });

/** Takes every frame ready, copying its payload (a frame's bytes are reused once the next is taken). */
function drain(encoder: FrameEncoder, into: Collected): void {
  for (let frame = encoder.nextFrame(); frame !== null; frame = encoder.nextFrame()) {
    into.starts.push(frame.startSample);
    into.counts.push(frame.sampleCount);
    into.pcm.push(...payload(frame));
  }
}

function payload(frame: EncodedFrame): Int16Array {
  const bytes = frame.bytes.slice(FrameEncoder.headerBytes);
  return new Int16Array(bytes.buffer);
}

/** The stream written in blocks of `blockFrames`, drained after each, flushed and drained again. */
function encodeAll(encoder: FrameEncoder, input: Float32Array, blockFrames: number): Collected {
  const got = collected();
  const step = blockFrames * encoder.channels;
  for (let at = 0; at < input.length; at += step) {
    encoder.write(input.subarray(at, at + step));
    drain(encoder, got);
  }
  encoder.flush();
  drain(encoder, got);
  return got;
}

describe('FrameEncoder', () => {
  for (const inputRate of [48000, 44100, 16000]) {
    it(`frames ${inputRate} Hz audio into 20 ms PCM16 frames equal to resample + encode`, () => {
      const input = noise(inputRate * 3 + 77, inputRate);
      const got = encodeAll(new FrameEncoder({ inputRate }), input, 128);
      expect(Int16Array.from(got.pcm)).toEqual(offlinePcm16(input, inputRate));
      const total = Math.floor((input.length * 16000) / inputRate);
      expect(got.counts.reduce((a, b) => a + b, 0)).toBe(total);
      // Every frame but the last is exactly 320 samples and starts where the previous ended.
      expect(got.counts.slice(0, -1).every((c) => c === 320)).toBe(true);
      got.starts.forEach((s, i) => expect(s).toBe(i * 320));
    });
  }

  it('gives the same bytes whatever the block sizes (blocks past 8192 frames are split)', () => {
    const input = noise(44100 * 2, 5);
    const a = encodeAll(new FrameEncoder({ inputRate: 44100 }), input, 128);
    const b = encodeAll(new FrameEncoder({ inputRate: 44100 }), input, 1000);
    const c = encodeAll(new FrameEncoder({ inputRate: 44100 }), input, 44100);
    expect(b.pcm).toEqual(a.pcm);
    expect(c.pcm).toEqual(a.pcm);
  });

  it('carries 16 kHz WAV samples through bit-exactly', () => {
    const random = mulberry32(9);
    const pcm = new Int16Array(16000);
    for (let i = 0; i < pcm.length; i++) pcm[i] = Math.floor(random() * 65536) - 32768;
    pcm[0] = -32768;
    pcm[1] = 32767;
    const floats = Float32Array.from(pcm, (v) => v / 32768); // how wav-decoder decodes
    expect(Int16Array.from(encodeAll(new FrameEncoder({ inputRate: 16000 }), floats, 160).pcm)).toEqual(pcm);
    // Int16 in is read as value / 32768: the same samples without the float copy.
    expect(Int16Array.from(encodeAll(new FrameEncoder({ inputRate: 16000 }), pcm as unknown as Float32Array, 160).pcm)).toEqual(pcm);
  });

  it('downmixes interleaved stereo', () => {
    const mono = noise(48000, 3);
    const stereo = new Float32Array(mono.length * 2);
    mono.forEach((v, i) => { stereo[2 * i] = v; stereo[2 * i + 1] = v; });
    const a = encodeAll(new FrameEncoder({ inputRate: 48000 }), mono, 480);
    const b = encodeAll(new FrameEncoder({ inputRate: 48000, channels: 2 }), stereo, 480);
    expect(b.pcm).toEqual(a.pcm);
  });

  it('heads every frame as the socket takes it: the first epoch, the start sample, the count (docs/protocol.md)', () => {
    const encoder = new FrameEncoder({ inputRate: 48000 });
    encoder.write(noise(4800 + 96, 6));
    encoder.flush();
    const heads: unknown[] = [];
    for (let frame = encoder.nextFrame(); frame !== null; frame = encoder.nextFrame()) {
      expect(frame.bytes.length).toBe(FrameEncoder.headerBytes + 2 * frame.sampleCount);
      heads.push(decodeFrameHeader(new DataView(frame.bytes.buffer, frame.bytes.byteOffset), 0, frame.bytes.length));
    }
    expect(heads).toEqual([
      ...[0, 320, 640, 960, 1280].map((startSample) => ({ ok: true, epoch: 1, startSample, sampleCount: 320 })),
      { ok: true, epoch: 1, startSample: 1600, sampleCount: 32 }, // floor(4896 / 3) = 1632
    ]);
  });

  it('honours frameMs and the stream start sample, and refuses a frame that is not whole samples', () => {
    const encoder = new FrameEncoder({ inputRate: 48000, frameMs: 10, startSample: 1_000_000 });
    encoder.write(noise(4800, 1));
    const frame = encoder.nextFrame()!;
    expect(frame.sampleCount).toBe(160);
    expect(frame.startSample).toBe(1_000_000);
    encoder.flush();
    expect(encoder.producedSamples).toBe(1_001_600); // 4800 frames at 48 kHz: 1600 samples, counted from the start
    expectDspError(() => new FrameEncoder({ inputRate: 44100, frameMs: 0.01 }), 'DSP_INVALID_OPTION');
    expectDspError(() => new FrameEncoder({ inputRate: 44100, bufferMs: 0 }), 'DSP_INVALID_OPTION');
    expectDspError(() => new FrameEncoder({ inputRate: 44000 }), 'DSP_UNSUPPORTED_RATE');
  });

  it('refuses write() after flush(); a second flush() adds nothing', () => {
    const encoder = new FrameEncoder({ inputRate: 48000 });
    encoder.write(noise(480, 1));
    expect(encoder.flush()).toBeGreaterThan(0);
    expect(encoder.flush()).toBe(0);
    expectDspError(() => encoder.write(noise(480, 1)), 'DSP_INVALID_STATE');
  });

  it('keeps the bytes of a frame it handed out until bufferMs more audio was written, even once the next nextFrame() freed it', () => {
    const encoder = new FrameEncoder({ inputRate: 16000, bufferMs: 200 });
    const input = noise(16000, 13);
    encoder.write(input.subarray(0, 320));
    const held = encoder.nextFrame()!;
    const before = held.bytes.slice();
    expect(encoder.nextFrame()).toBeNull(); // frees its slot
    const got = collected();
    for (let at = 320; at < 320 + 3200; at += 160) {
      encoder.write(input.subarray(at, at + 160)); // 200 ms more, taken as it comes
      drain(encoder, got);
    }
    expect(got.starts[0]).toBe(320);
    expect(held.bytes).toEqual(before);
    expect(encoder.overflowSamples).toBe(0);
  });

  for (const kernel of ['wasm', 'js'] as const) {
    it(`${kernel}: small slots wrapped many times give the bytes of resample + encodePcm16`, () => {
      const input = loud(48000 * 6 + 17, 21);
      const encoder = new FrameEncoder({ inputRate: 48000, kernel, bufferMs: 100 });
      expect(encoder.kernel).toBe(kernel);
      const got = collected();
      const random = mulberry32(kernel.length);
      for (let at = 0; at < input.length;) {
        const size = Math.min(1 + Math.floor(random() * 600), input.length - at);
        encoder.write(input.subarray(at, at + size));
        at += size;
        drain(encoder, got);
      }
      encoder.flush();
      drain(encoder, got);
      expect(encoder.overflowSamples).toBe(0);
      expect(encoder.capacity * 4).toBeLessThan(got.pcm.length);
      expect(Int16Array.from(got.pcm)).toEqual(offlinePcm16(input, 48000, { kernel }));
      got.starts.forEach((s, i) => expect(s).toBe(i * 320));
    });

    it(`${kernel}: drops the oldest whole frames when nobody takes them, and what is left is still exact`, () => {
      const input = loud(48000 * 3, 5);
      const encoder = new FrameEncoder({ inputRate: 48000, kernel, bufferMs: 100 });
      for (let at = 0; at < input.length; at += 128) encoder.write(input.subarray(at, at + 128));
      encoder.flush();
      const total = 48000;
      expect(encoder.producedSamples).toBe(total);
      const dropped = encoder.overflowSamples;
      expect(dropped % 320).toBe(0);
      // What is kept: the slots' capacity, less the part of the last one a write could not fill.
      expect(total - dropped).toBeGreaterThan(encoder.capacity - 320);
      expect(total - dropped).toBeLessThanOrEqual(encoder.capacity);
      const got = collected();
      drain(encoder, got);
      expect(got.starts[0]).toBe(dropped);
      expect(Int16Array.from(got.pcm)).toEqual(offlinePcm16(input, 48000, { kernel }).subarray(dropped));
    });
  }

  it('after an overflow, nextFrame() goes on with the oldest frame kept, at its true position', () => {
    const input = noise(16000 * 2, 8);
    const encoder = new FrameEncoder({ inputRate: 16000, bufferMs: 100 });
    encoder.write(input.subarray(0, 320));
    expect(encoder.nextFrame()!.startSample).toBe(0);
    for (let at = 320; at < input.length; at += 160) encoder.write(input.subarray(at, at + 160));
    const dropped = encoder.overflowSamples;
    expect(dropped).toBeGreaterThan(0);
    const frame = encoder.nextFrame()!;
    expect(frame.startSample).toBe(dropped);
    const expected = new Uint8Array(640);
    encodePcm16(input.subarray(dropped, dropped + 320), expected);
    expect(Buffer.from(frame.bytes.subarray(FrameEncoder.headerBytes)).equals(Buffer.from(expected))).toBe(true);
  });

  it('allocates nothing per write() and nextFrame() in the steady state: a fixed frame object per slot, all in one buffer', () => {
    const encoder = new FrameEncoder({ inputRate: 44100 });
    const input = noise(44100 * 3, 2);
    const objects = new Set<object>();
    const buffers = new Set<ArrayBufferLike>();
    let frames = 0;
    for (let at = 0; at + 128 <= input.length; at += 128) {
      encoder.write(input.subarray(at, at + 128));
      for (let frame = encoder.nextFrame(); frame !== null; frame = encoder.nextFrame()) {
        objects.add(frame);
        buffers.add(frame.bytes.buffer);
        frames++;
      }
    }
    expect(frames).toBeGreaterThan(140);
    expect(objects.size).toBeLessThanOrEqual(encoder.slotCount);
    expect(buffers.size).toBe(1);
  });
});

/** endSegment() (package-internal): the realtime pause. The tail goes out, the stream goes on, counts stay exact. */
describe('FrameEncoder.endSegment', () => {
  for (const kernel of ['js', 'wasm'] as const satisfies readonly ResamplerKernel[]) {
    for (const inputRate of [48000, 44100, 22050]) {
      it(`${kernel}, ${inputRate} Hz: each segment is a stream of its own, positions continue`, () => {
        const first = noise(inputRate + 1234, 3);
        const second = noise(Math.floor(inputRate / 2) + 77, 4);
        const encoder = new FrameEncoder({ inputRate, kernel });
        for (let at = 0; at < first.length; at += 500) encoder.write(first.subarray(at, at + 500));
        expect(encoder.endSegment()).toBeGreaterThan(0);
        const one = Math.floor((first.length * 16000) / inputRate);
        expect(encoder.producedSamples).toBe(one);
        expect(encoder.flushed).toBe(false);
        for (let at = 0; at < second.length; at += 333) encoder.write(second.subarray(at, at + 333));
        encoder.flush();
        const two = Math.floor((second.length * 16000) / inputRate);
        expect(encoder.producedSamples).toBe(one + two);
        const got = collected();
        drain(encoder, got);
        expect(Int16Array.from(got.pcm)).toEqual(Int16Array.from([...offlinePcm16(first, inputRate, { kernel }), ...offlinePcm16(second, inputRate, { kernel })]));
        got.starts.forEach((s, i) => expect(s).toBe(i * 320));
      });
    }
  }

  it('a segment ended right away or twice adds nothing; after flush() it is a no-op', () => {
    const encoder = new FrameEncoder({ inputRate: 48000 });
    expect(encoder.endSegment()).toBe(0);
    encoder.write(noise(4800, 9));
    encoder.endSegment();
    expect(encoder.endSegment()).toBe(0);
    expect(encoder.producedSamples).toBe(1600);
    encoder.flush();
    expect(encoder.endSegment()).toBe(0);
    expect(encoder.producedSamples).toBe(1600);
  });
});
