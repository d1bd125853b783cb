import { describe, expect, it } from 'vitest';
import type { EncodedFrame } from '../../src/dsp/frame-encoder.js';
import { decodeFrameHeader } from '../../src/protocol.js';
import { AudioOutbox, type Gap } from '../../src/realtime/audio/outbox.js';
import { offlinePcm16 } from '../support/offline-encode.js';
import { int16Noise } from '../support/prng.js';

const ramp = (from: number, n: number): Int16Array => Int16Array.from({ length: n }, (_, i) => ((from + i) % 30_000) - 15_000);

function payload(bytes: Uint8Array): Int16Array {
  return new Int16Array(bytes.buffer.slice(bytes.byteOffset + 16, bytes.byteOffset + bytes.byteLength));
}

function header(frame: EncodedFrame): unknown {
  return decodeFrameHeader(new DataView(frame.bytes.buffer, frame.bytes.byteOffset, frame.bytes.byteLength), 0, frame.bytes.length);
}

function drain(box: AudioOutbox, epoch: number, allowShort: boolean): EncodedFrame[] {
  const out: EncodedFrame[] = [];
  for (let f = box.nextFrame(epoch, allowShort); f !== null; f = box.nextFrame(epoch, allowShort)) {
    out.push({ bytes: f.bytes, startSample: f.startSample, sampleCount: f.sampleCount });
  }
  return out;
}

describe('AudioOutbox retention: the retained audio is the frames', () => {
  it('resends from a server cursor inside a frame: one fresh frame for its rest, then the retained frames re-headed in place', () => {
    const box = new AudioOutbox({ sampleRate: 16_000, channels: 1, bufferMs: 1000 });
    box.writePcm16(ramp(0, 1600));
    const first = drain(box, 1, false);
    expect(first.map((f) => f.startSample)).toEqual([0, 320, 640, 960, 1280]);
    box.acknowledge(777); // the server kept part of the frame at 640 (it has [0, 777))
    box.rewindTo(777);
    const again = drain(box, 2, false);
    expect(again.map((f) => [f.startSample, f.sampleCount])).toEqual([[777, 183], [960, 320], [1280, 320]]);
    expect(header(again[0]!)).toEqual({ ok: true, epoch: 2, startSample: 777, sampleCount: 183 });
    expect(payload(again[0]!.bytes)).toEqual(ramp(777, 183));
    // The rare one is built apart; the others are the very bytes sent before, with the new epoch.
    expect(again[0]!.bytes.buffer).not.toBe(first[0]!.bytes.buffer);
    for (const [i, f] of again.slice(1).entries()) {
      const before = first[i + 3]!;
      expect(f.bytes.buffer).toBe(before.bytes.buffer);
      expect(f.bytes.byteOffset).toBe(before.bytes.byteOffset);
      expect(header(f)).toEqual({ ok: true, epoch: 2, startSample: f.startSample, sampleCount: 320 });
      expect(payload(f.bytes)).toEqual(ramp(f.startSample, 320));
    }
    // The partly acknowledged frame stays held until the server has all of it.
    expect(box.peek(640, new Int16Array(137))).toBe(137);
    box.acknowledge(960);
    expect(box.peek(640, new Int16Array(320))).toBe(0);
  });

  it('a server cursor inside a slot still filling waits for it, or with allowShort sends its rest and seals it', () => {
    const box = new AudioOutbox({ sampleRate: 16_000, channels: 1, bufferMs: 1000 });
    box.writePcm16(ramp(0, 500));
    expect(drain(box, 1, true).map((f) => [f.startSample, f.sampleCount])).toEqual([[0, 320], [320, 180]]);
    box.writePcm16(ramp(500, 100)); // after the pause's short frame: a new slot at 500
    box.acknowledge(400);
    box.rewindTo(400);
    expect(drain(box, 2, false).map((f) => [f.startSample, f.sampleCount])).toEqual([[400, 100]]); // the sealed slot's rest
    expect(drain(box, 2, true).map((f) => [f.startSample, f.sampleCount])).toEqual([[500, 100]]);
    box.writePcm16(ramp(600, 319));
    expect(drain(box, 2, false)).toEqual([]); // [600, 919) in a fresh slot, not whole yet
    box.writePcm16(ramp(919, 1));
    const whole = drain(box, 2, false);
    expect(whole.map((f) => [f.startSample, f.sampleCount])).toEqual([[600, 320]]);
    expect(payload(whole[0]!.bytes)).toEqual(ramp(600, 320));
  });

  it('overflow drops whole oldest slots and declares exactly what they held as a gap; a sealed short slot counts its samples only', () => {
    const gaps: Gap[] = [];
    const box = new AudioOutbox({ sampleRate: 16_000, channels: 1, bufferMs: 100 });
    // A pause after 500 samples: frames [0, 320) and a short [320, 500), which seals its slot.
    box.writePcm16(ramp(0, 500));
    drain(box, 1, true);
    box.acknowledge(320);
    // The socket went down; far more than the slots hold arrives, in odd-sized blocks.
    let produced = 500;
    const next = int16Noise(3);
    while (produced < 500 + box.capacity * 2) {
      const n = 1 + (next() & 1023);
      box.writePcm16(ramp(produced, n));
      produced += n;
    }
    box.rewindTo(320);
    const frames = drain(box, 2, true);
    // Everything kept is whole slots from a slot boundary (500 + k·320) up to the open slot.
    const keptFrom = produced - frames.reduce((n, f) => n + f.sampleCount, 0);
    expect((keptFrom - 500) % 320).toBe(0);
    expect(produced - keptFrom).toBeLessThanOrEqual(box.capacity);
    expect(box.capacity - (produced - keptFrom)).toBeLessThan(320); // only the open slot's rest is unused
    // Dropped: the sealed short slot (180 samples, not 320) and the full ones after it.
    expect(box.stats().overflowSamples).toBe(keptFrom - 320);
    gaps.push(...box.takeGaps());
    expect(gaps).toEqual([{ from: 320, to: keptFrom, serverSample: 320, cause: 'overflow' }]);
    let server = 320;
    let captured = keptFrom;
    for (const f of frames) {
      expect(f.startSample).toBe(server);
      expect(payload(f.bytes)).toEqual(ramp(captured, f.sampleCount));
      server += f.sampleCount;
      captured += f.sampleCount;
    }
    expect(frames.slice(0, -1).every((f) => f.sampleCount === 320)).toBe(true);
    box.acknowledge(server);
    expect(box.stats()).toMatchObject({ producedSamples: produced, ackedSamples: produced, bufferedSamples: 0, gapSamples: keptFrom - 320 });
  });

  it('steady state: every frame is one of the fixed slots, in the resampler memory the kernel writes, never a new buffer', () => {
    const box = new AudioOutbox({ sampleRate: 48_000, channels: 1, bufferMs: 2000 });
    const block = new Float32Array(128);
    const next = int16Noise(5);
    const objects = new Set<object>();
    const buffers = new Set<ArrayBufferLike>();
    let frames = 0;
    for (let i = 0; i < 6000; i++) {
      for (let j = 0; j < block.length; j++) block[j] = next() / 40_000;
      box.writeFloat(block);
      for (let f = box.nextFrame(1, false); f !== null; f = box.nextFrame(1, false)) {
        objects.add(f);
        buffers.add(f.bytes.buffer);
        expect(f.sampleCount).toBe(320);
        frames++;
      }
      const acked = box.expected - 1600;
      if (acked > box.ackedServer) box.acknowledge(acked);
    }
    expect(frames).toBeGreaterThan(700);
    expect(objects.size).toBeLessThanOrEqual(box.frameBuffers);
    expect(buffers.size).toBe(1);
    if (box.stats().resamplerKernel === 'wasm') expect([...buffers][0]).toBeInstanceOf(ArrayBuffer); // the wasm memory's buffer
  });

  it('writeFloat gives the bytes of one Resampler + encodePcm16 over the whole stream, across slot boundaries at any block size, with either kernel', () => {
    const next = int16Noise(9);
    const input = Float32Array.from({ length: 44_100 }, () => next() / 40_000);
    const contiguous = (kernel: 'js' | 'auto'): Int16Array => offlinePcm16(input, 44_100, { kernel });
    const run = (kernel: 'js' | 'auto', block: number): Int16Array => {
      const box = new AudioOutbox({ sampleRate: 16_000, channels: 1, bufferMs: 5000 });
      box.setInput({ sampleRate: 44_100, kernel });
      for (let at = 0; at < input.length; at += block) box.writeFloat(input.subarray(at, at + block));
      box.flushResampler();
      const out = new Int16Array(box.produced);
      expect(box.peek(0, out)).toBe(out.length);
      return out;
    };
    for (const kernel of ['js', 'auto'] as const) {
      const reference = contiguous(kernel);
      expect(reference.length).toBe(16_000);
      for (const block of [128, 441, 999, 44_100]) expect(run(kernel, block)).toEqual(reference);
    }
  });
});
