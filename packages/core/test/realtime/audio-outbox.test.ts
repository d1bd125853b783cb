import { describe, expect, it } from 'vitest';
import { decodeFrameHeader } from '../../src/protocol.js';
import { AudioOutbox, type Gap } from '../../src/realtime/audio/outbox.js';
import { offlinePcm16 } from '../support/offline-encode.js';

const ramp = (from: number, n: number): Int16Array => Int16Array.from({ length: n }, (_, i) => ((from + i) % 30_000) - 15_000);

function payload(bytes: Uint8Array): Int16Array {
  return new Int16Array(bytes.buffer.slice(bytes.byteOffset + 16, bytes.byteOffset + bytes.byteLength));
}

describe('AudioOutbox', () => {
  it('cuts 20 ms frames with the header (epoch, absolute start) and exact PCM16 payloads', () => {
    const gaps: Gap[] = [];
    const box = new AudioOutbox({ sampleRate: 16_000, channels: 1, bufferMs: 1000 });
    box.writePcm16(ramp(0, 700));
    const a = box.nextFrame(3, false)!;
    const b = box.nextFrame(3, false)!;
    expect(box.nextFrame(3, false)).toBeNull(); // 60 samples left: not a whole frame
    const c = box.nextFrame(3, true)!; // pause/finish sends the remainder
    for (const [frame, start, count] of [[a, 0, 320], [b, 320, 320], [c, 640, 60]] as const) {
      expect(decodeFrameHeader(new DataView(frame.bytes.buffer, frame.bytes.byteOffset, frame.bytes.byteLength), 0, frame.bytes.length)).toEqual({ ok: true, epoch: 3, startSample: start, sampleCount: count });
      expect(payload(frame.bytes)).toEqual(ramp(start, count));
    }
    expect(box.stats()).toMatchObject({ producedSamples: 700, sentSamples: 700, ackedSamples: 0, unackedSamples: 700, queuedSamples: 0 });
    gaps.push(...box.takeGaps());
    expect(gaps).toEqual([]);
  });

  it('acknowledge frees; rewindTo resends exactly from the server cursor', () => {
    const box = new AudioOutbox({ sampleRate: 16_000, channels: 1, bufferMs: 1000 });
    box.writePcm16(ramp(0, 1280));
    while (box.nextFrame(1, false) !== null);
    box.acknowledge(500);
    expect(box.stats()).toMatchObject({ ackedSamples: 500, unackedSamples: 780, bufferedSamples: 780 });
    box.acknowledge(100); // stale: ignored
    expect(box.acked).toBe(500);
    box.rewindTo(500);
    // The cursor is inside the frame sent for [320, 640): its rest goes first, then the frames as they were.
    const again = box.nextFrame(2, true)!;
    expect(again.startSample).toBe(500);
    expect(payload(again.bytes)).toEqual(ramp(500, 140));
    const next = box.nextFrame(2, true)!;
    expect(next.startSample).toBe(640);
    expect(payload(next.bytes)).toEqual(ramp(640, 320));
  });

  it('after an overflow the server never got, declares the lost range a gap and continues at the server cursor (no invented samples)', () => {
    const gaps: Gap[] = [];
    const box = new AudioOutbox({ sampleRate: 16_000, channels: 1, bufferMs: 100 });
    const capacity = box.capacity;
    box.writePcm16(ramp(0, 320));
    box.nextFrame(1, false);
    // Socket down: far more than the ring holds arrives meanwhile.
    inFrames(box, ramp(320, capacity * 2)); // blocks that fit (one larger than bufferMs is refused whole)
    const produced = 320 + capacity * 2;
    box.rewindTo(320);
    const frames = [];
    for (let f = box.nextFrame(1, true); f !== null; f = box.nextFrame(1, true)) frames.push(f);
    const kept = produced - capacity;
    gaps.push(...box.takeGaps());
    expect(gaps).toEqual([{ from: 320, to: kept, serverSample: 320, cause: 'overflow' }]);
    // Frames carry the server's positions: contiguous from its cursor, the kept audio, nothing else.
    let server = 320;
    let captured = kept;
    for (const f of frames) {
      expect(f.startSample).toBe(server);
      expect(payload(f.bytes)).toEqual(ramp(captured, f.sampleCount));
      server += f.sampleCount;
      captured += f.sampleCount;
    }
    expect(captured).toBe(produced);
    expect(server).toBe(produced - (kept - 320));
    // The server's ack in its positions releases everything captured; the gap is the difference.
    box.acknowledge(server);
    expect(box.stats()).toMatchObject({ ackedSamples: produced, bufferedSamples: 0, gapSamples: kept - 320, unackedSamples: 0 });
    expect(box.inFlight).toBe(0);
    // Overflow counts every sample dropped from the ring, the sent-but-unacknowledged first frame included.
    expect(box.stats().overflowSamples).toBe(kept);
    expect(box.gaps).toEqual([[320, kept]]);
  });

  it('widens a gap when the server turns out to be behind it, reporting only the new part', () => {
    const gaps: Gap[] = [];
    const box = new AudioOutbox({ sampleRate: 16_000, channels: 1, bufferMs: 100 });
    const capacity = box.capacity;
    // Sent up to 960 while acks were withheld; then the ring overflowed past what was sent.
    box.writePcm16(ramp(0, 960));
    while (box.nextFrame(1, false) !== null);
    inFrames(box, ramp(960, capacity * 2));
    const produced = 960 + capacity * 2;
    const kept = produced - capacity;
    expect(box.nextFrame(1, false)?.startSample).toBe(960); // gap [960, kept) declared, audio continues at 960
    gaps.push(...box.takeGaps());
    expect(gaps).toEqual([{ from: 960, to: kept, serverSample: 960, cause: 'overflow' }]);
    // The socket died: the server only ever got 640 (the frame at 640 was lost with it).
    box.rewindTo(640);
    const first = box.nextFrame(1, false)!;
    expect(first.startSample).toBe(640);
    expect(payload(first.bytes)).toEqual(ramp(kept, 320));
    gaps.push(...box.takeGaps());
    expect(gaps.slice(1)).toEqual([{ from: 640, to: 960, serverSample: 640, cause: 'overflow' }]);
    expect(box.gaps).toEqual([[640, kept]]);
    expect(box.toServer(produced)).toBe(produced - (kept - 640));
  });

  it('declares audio a REST finish left undelivered', () => {
    const gaps: Gap[] = [];
    const box = new AudioOutbox({ sampleRate: 16_000, channels: 1, bufferMs: 1000 });
    box.writePcm16(ramp(0, 2000));
    box.nextFrame(1, false);
    box.declareUndelivered(320);
    gaps.push(...box.takeGaps());
    expect(gaps).toEqual([{ from: 320, to: 2000, serverSample: 320, cause: 'undelivered' }]);
    expect(box.stats().gapSamples).toBe(1680);
  });

  it('encodes Float32 at 48 kHz stereo through the pipeline and refuses mixing with PCM16 inside a segment', () => {
    const box = new AudioOutbox({ sampleRate: 48_000, channels: 2, bufferMs: 1000 });
    box.writeFloat(new Float32Array(48_000 * 2 * 0.1));
    expect(() => box.writePcm16(new Int16Array(10))).toThrow(/cannot be mixed/);
    expect(box.produced).toBeLessThan(1600); // the resampler still holds its latency's worth
    box.endSegment();
    expect(box.produced).toBe(1600);
    // After the break the resampler holds nothing: PCM16 follows, then Float32 again, positions continue.
    box.writePcm16(ramp(0, 320));
    expect(box.produced).toBe(1920);
    box.writeFloat(new Float32Array(4800 * 2));
    box.endSegment();
    expect(box.produced).toBe(1920 + 1600);
    const sent: number[] = [];
    for (let f = box.nextFrame(1, true); f !== null; f = box.nextFrame(1, true)) sent.push(...payload(f.bytes));
    expect(Int16Array.from(sent.slice(1600, 1920))).toEqual(ramp(0, 320));
  });

  it("setInput() takes the writer's rate before audio: each segment is resampled exactly as a stream of its own", () => {
    const rate = 44_100;
    const tone = (n: number, hz: number): Float32Array => Float32Array.from({ length: n }, (_, i) => 0.4 * Math.sin((2 * Math.PI * hz * i) / rate));
    const offline = (x: Float32Array): Int16Array => offlinePcm16(x, rate, { kernel: 'js' });
    const box = new AudioOutbox({ sampleRate: 16_000, channels: 1, bufferMs: 10_000 });
    box.setInput({ sampleRate: rate, kernel: 'js' });
    expect(box.stats().resamplerKernel).toBe('js');
    const a = tone(10_000, 440);
    const b = tone(7_001, 300);
    for (let at = 0; at < a.length; at += 128) box.writeFloat(a.subarray(at, at + 128));
    const tail = box.endSegment();
    expect(tail).toBeGreaterThan(0);
    expect(box.endSegment()).toBe(0); // twice is once
    for (let at = 0; at < b.length; at += 128) box.writeFloat(b.subarray(at, at + 128));
    box.endSegment();
    const expected = new Int16Array([...offline(a), ...offline(b)]);
    expect(box.produced).toBe(expected.length);
    const sent: number[] = [];
    for (let f = box.nextFrame(1, true); f !== null; f = box.nextFrame(1, true)) sent.push(...payload(f.bytes));
    expect(Int16Array.from(sent)).toEqual(expected);
    box.setInput({ sampleRate: rate, kernel: 'js' }); // the same format: nothing changes
    box.writeFloat(a.subarray(0, 128));
    // A segment is open: its input is in the resampler, which the new format never saw.
    expect(() => box.setInput({ sampleRate: 48_000 })).toThrow(expect.objectContaining({ code: 'REALTIME_INVALID_STATE' }));
  });

  it('setInput() after a discontinuity swaps the resampler; positions, retained audio and resends carry on', () => {
    const tone = (rate: number, n: number, hz: number, channels = 1): Float32Array =>
      Float32Array.from({ length: n * channels }, (_, i) => 0.4 * Math.sin((2 * Math.PI * hz * Math.floor(i / channels)) / rate));
    const offline = (rate: number, x: Float32Array, channels = 1): Int16Array => offlinePcm16(x, rate, { channels, kernel: 'js' });
    const gaps: Gap[] = [];
    const box = new AudioOutbox({ sampleRate: 48_000, channels: 1, bufferMs: 10_000 });
    box.setInput({ sampleRate: 48_000, kernel: 'js' });
    const a = tone(48_000, 48_013, 440);
    const b = tone(44_100, 22_051, 300, 2); // the device came back at 44.1 kHz, stereo
    for (let at = 0; at < a.length; at += 480) box.writeFloat(a.subarray(at, at + 480));
    box.endSegment();
    const before = offline(48_000, a);
    expect(box.produced).toBe(before.length); // floor(48013 / 3) = 16004
    // Some of it went out and was acknowledged, some is in flight, some still queued.
    const sentFirst: number[] = [];
    for (let i = 0; i < 30; i++) sentFirst.push(...payload(box.nextFrame(1, false)!.bytes));
    box.acknowledge(4_800);
    expect(box.stats()).toMatchObject({ ackedSamples: 4_800, sentSamples: 9_600, producedSamples: 16_004 });

    box.setInput({ sampleRate: 44_100, channels: 2, kernel: 'js' });
    expect(box.stats()).toMatchObject({ ackedSamples: 4_800, sentSamples: 9_600, producedSamples: 16_004, bufferedSamples: 11_204 });
    for (let at = 0; at < b.length; at += 882) box.writeFloat(b.subarray(at, at + 882));
    box.endSegment();
    const after = offline(44_100, b, 2);
    expect(after.length).toBe(Math.floor((22_051 * 160) / 441)); // 8000
    expect(box.produced).toBe(before.length + after.length);

    // A reconnect: the server had 4,800; everything after it is sent again, from the kept audio.
    box.rewindTo(4_800);
    const resent: number[] = [];
    let start = -1;
    for (let f = box.nextFrame(2, true); f !== null; f = box.nextFrame(2, true)) {
      if (start < 0) start = f.startSample;
      resent.push(...payload(f.bytes));
    }
    expect(start).toBe(4_800);
    const all = new Int16Array([...before, ...after]);
    expect(Int16Array.from(resent)).toEqual(all.subarray(4_800));
    expect(Int16Array.from(sentFirst)).toEqual(all.subarray(0, 9_600));
    gaps.push(...box.takeGaps());
    expect(gaps).toEqual([]);
    expect(box.stats().overflowSamples).toBe(0);
  });

  it('setInput() refuses an unsupported rate and leaves the outbox as it was', () => {
    const box = new AudioOutbox({ sampleRate: 48_000, channels: 1, bufferMs: 1000 });
    expect(() => box.setInput({ sampleRate: 12_345 })).toThrow(expect.objectContaining({ code: 'DSP_UNSUPPORTED_RATE' }));
    box.writeFloat(new Float32Array(4800));
    box.endSegment();
    expect(box.produced).toBe(1600);
  });
});

/** Writes PCM16 in 20 ms blocks, as a live writer does: only many writes can outgrow bufferMs. */
function inFrames(box: AudioOutbox, samples: Int16Array): void {
  for (let at = 0; at < samples.length; at += 320) box.writePcm16(samples.subarray(at, at + 320));
}
