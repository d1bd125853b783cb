import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { AudioOutbox } from '../../src/realtime/audio/outbox.js';

/** Every frame the outbox cuts, as one Int16Array of what the server would store. */
function drained(box: AudioOutbox): Int16Array {
  const parts: Int16Array[] = [];
  for (let f = box.nextFrame(1, true); f !== null; f = box.nextFrame(1, true)) {
    parts.push(new Int16Array(f.bytes.buffer.slice(f.bytes.byteOffset + 16, f.bytes.byteOffset + f.bytes.byteLength)));
  }
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
}

const outbox = (sampleRate: number, channels = 1, bufferMs = 2000): AudioOutbox => new AudioOutbox({ sampleRate, channels, bufferMs });

describe('what write() and writePcm16() accept', () => {
  it('takes typed arrays made in another realm (a worklet, an iframe, a VM context) and encodes them as its own', () => {
    const tone = Float32Array.from({ length: 4800 }, (_, i) => 0.5 * Math.sin(i / 7));
    const foreign = runInNewContext('new Float32Array(n)', { n: tone.length }) as Float32Array;
    foreign.set(tone);
    expect(foreign instanceof Float32Array).toBe(false); // really another realm
    const own = outbox(48_000);
    const other = outbox(48_000);
    own.writeFloat(tone);
    other.writeFloat(foreign);
    own.flushResampler();
    other.flushResampler();
    expect(drained(other)).toEqual(drained(own));
    const pcm = runInNewContext('Int16Array.from({ length: 640 }, (_, i) => i * 7)') as Int16Array;
    const box = outbox(16_000);
    box.writePcm16(pcm);
    expect(Array.from(drained(box))).toEqual(Array.from(pcm));
  });

  it('refuses a wrong type before anything is taken: no mode switch, no dropped audio', () => {
    const box = outbox(16_000, 1, 100);
    for (let at = 0; at < 4800; at += 320) box.writePcm16(new Int16Array(320)); // the ring is full and overflowing
    const overflow = box.stats().overflowSamples;
    expect(() => box.writeFloat(new Uint8Array(640) as unknown as Float32Array)).toThrow(expect.objectContaining({ code: 'DSP_INVALID_BUFFER' }));
    expect(() => box.writePcm16(Buffer.alloc(11) as unknown as Int16Array)).toThrow(/view them as new Int16Array/);
    expect(box.stats().overflowSamples).toBe(overflow);
    box.writePcm16(new Int16Array(320)); // still PCM16 mode: the refused float block switched nothing
  });

  it('a block of exactly bufferMs fits at any rate and channel count; a block that would produce more is refused whole', () => {
    for (const [rate, channels] of [[16_000, 1], [48_000, 2], [44_100, 1], [8_000, 1]] as const) {
      const box = outbox(rate, channels, 2000);
      const frames = (rate * 2000) / 1000;
      expect(box.writeFloat(new Float32Array(frames * channels))).toBeGreaterThan(0);
      const next = outbox(rate, channels, 2000);
      // 20 ms more than the buffer holds: more than the resampler's delay keeps back, so it would overflow.
      const over = Math.ceil((next.keptSamples * rate) / 16_000) + rate / 50;
      expect(() => next.writeFloat(new Float32Array(over * channels))).toThrow(expect.objectContaining({ code: 'REALTIME_WRITE_TOO_LARGE' }));
      expect(next.produced).toBe(0);
    }
    const pcm = outbox(16_000);
    expect(pcm.writePcm16(new Int16Array(pcm.keptSamples))).toBe(pcm.keptSamples);
    expect(() => outbox(16_000).writePcm16(new Int16Array(pcm.keptSamples + 1))).toThrow(expect.objectContaining({ code: 'REALTIME_WRITE_TOO_LARGE' }));
  });

  it('writableSamples counts only audio the server has not acknowledged, a partly filled frame included', () => {
    const box = outbox(16_000, 1, 2000);
    expect(box.writableSamples).toBe(box.keptSamples);
    box.writePcm16(new Int16Array(100)); // less than one 20 ms frame: its slot stays open
    box.nextFrame(1, true);
    expect(box.writableSamples).toBe(box.keptSamples - 100);
    box.acknowledge(100);
    expect(box.writableSamples).toBe(box.keptSamples);
  });
});
