import { describe, expect, it } from 'vitest';
import { AudioOutbox } from '../../src/realtime/audio/outbox.js';
import { int16Noise } from '../support/prng.js';

describe('AudioOutbox frame buffers', () => {
  it('never overwrites a frame the server has not acknowledged, and stops growing once acknowledgements flow', () => {
    const box = new AudioOutbox({ sampleRate: 16_000, channels: 1, bufferMs: 10_000 });
    const next = int16Noise(7);
    const block = new Int16Array(320);
    const held: Array<{ bytes: Uint8Array; copy: Uint8Array }> = [];
    for (let i = 0; i < 50; i++) {
      for (let j = 0; j < block.length; j++) block[j] = next();
      box.writePcm16(block);
      const f = box.nextFrame(1, false)!;
      held.push({ bytes: f.bytes, copy: f.bytes.slice() });
    }
    for (const h of held) expect(h.bytes).toEqual(h.copy); // 50 unacknowledged frames, all intact
    box.acknowledge(box.expected);
    const size = box.frameBuffers;
    for (let i = 0; i < 500; i++) {
      box.writePcm16(block);
      box.nextFrame(1, false);
      box.acknowledge(box.expected - 640); // two frames in flight
    }
    expect(box.frameBuffers).toBe(size);
  });

  it('write() takes Int16 at any rate and channel count as value / 32768, bit for bit the Float32 path', () => {
    const next = int16Noise(11);
    const int16 = Int16Array.from({ length: 48_000 * 2 }, () => next());
    const float = Float32Array.from(int16, (v) => v / 32768);
    const encode = (block: Int16Array | Float32Array): Int16Array => {
      const box = new AudioOutbox({ sampleRate: 48_000, channels: 2, bufferMs: 5000 });
      for (let at = 0; at < block.length; at += 256) box.writeFloat(block.subarray(at, at + 256));
      box.flushResampler();
      const out = new Int16Array(box.unsent);
      expect(box.peek(box.expected, out)).toBe(out.length);
      return out;
    };
    const a = encode(int16);
    expect(a.length).toBe(16_000); // 48,000 stereo frames: one second
    expect(a).toEqual(encode(float));
  });
});
