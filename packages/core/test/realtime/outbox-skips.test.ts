import { describe, expect, it } from 'vitest';
import { decodeFrameHeader, FRAME } from '../../src/protocol.js';
import { AudioOutbox } from '../../src/realtime/audio/outbox.js';
import type { EncodedFrame } from '../../src/dsp/frame-encoder.js';
import { int16Noise } from '../support/prng.js';

/** What went out: [kind, start, count] per frame, audio payloads checked against the captured samples. */
function drain(box: AudioOutbox, captured: Int16Array, allowShort = true): Array<[string, number, number]> {
  const out: Array<[string, number, number]> = [];
  for (let f: EncodedFrame | null = box.nextFrame(1, allowShort); f !== null; f = box.nextFrame(1, allowShort)) {
    const h = decodeFrameHeader(new DataView(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength), 0, f.bytes.byteLength);
    if (!h.ok) throw new Error(h.reason);
    if (h.skip === true) {
      out.push(['skip', h.startSample, h.sampleCount]);
      continue;
    }
    const payload = new DataView(f.bytes.buffer, f.bytes.byteOffset + FRAME.headerBytes);
    for (let i = 0; i < h.sampleCount; i++) expect(payload.getInt16(2 * i, true)).toBe(captured[h.startSample + i]);
    const last = out.at(-1);
    if (last !== undefined && last[0] === 'audio' && last[1] + last[2] === h.startSample) last[2] += h.sampleCount;
    else out.push(['audio', h.startSample, h.sampleCount]);
  }
  return out;
}

function gatedBox(samples: Int16Array): AudioOutbox {
  const box = new AudioOutbox({ sampleRate: 16_000, channels: 1, bufferMs: 10_000 });
  box.gate();
  box.writePcm16(samples);
  return box;
}

describe('AudioOutbox: skipped time (the voice gate)', () => {
  const next = int16Noise(5);
  const captured = Int16Array.from({ length: 16_000 }, () => next());

  it('sends what the gate decided, skip frames in place of skipped time, and holds the undecided', () => {
    const box = gatedBox(captured);
    box.skipFrames = true;
    expect(drain(box, captured)).toEqual([]); // nothing decided yet: all held
    box.decide(0, 960);
    box.decide(9600, 9600);
    expect(drain(box, captured, false)).toEqual([['audio', 0, 960], ['skip', 960, 8640]]);
    box.decide(9600, 12_000);
    expect(drain(box, captured)).toEqual([['audio', 9600, 2400]]);
    expect(box.stats().skippedSamples).toBe(8640);
    // Skipped time carries no audio: not in flight.
    expect(box.inFlight).toBe(960 + 2400);
    expect(box.unsent).toBe(4000); // held: the gate has not decided it
  });

  it('resends from the server cursor with the skips in their place, each counted saved once', () => {
    const box = gatedBox(captured);
    box.skipFrames = true;
    box.decide(0, 1000);
    box.decide(4000, 4000);
    box.decide(4000, 6000);
    const first = drain(box, captured);
    expect(first).toEqual([['audio', 0, 1000], ['skip', 1000, 3000], ['audio', 4000, 2000]]);
    // A reconnect: the server had only 640; then a cursor inside the skip (it took part of it).
    box.acknowledge(640);
    box.rewindTo(640);
    expect(drain(box, captured)).toEqual([['audio', 640, 360], ['skip', 1000, 3000], ['audio', 4000, 2000]]);
    box.acknowledge(2500);
    box.rewindTo(2500);
    expect(drain(box, captured)).toEqual([['skip', 2500, 1500], ['audio', 4000, 2000]]);
    expect(box.stats().skippedSamples).toBe(3000);
    box.acknowledge(6000);
    expect(box.inFlight).toBe(0);
  });

  it('to a server without skip frames, sends the held audio of a skipped stretch: the timeline stays whole', () => {
    const box = gatedBox(captured);
    box.skipFrames = false;
    box.decide(0, 1000);
    box.decide(4000, 6000);
    expect(drain(box, captured)).toEqual([['audio', 0, 6000]]);
    expect(box.stats().skippedSamples).toBe(0);
    // The next socket takes them: the skip still unacknowledged goes as a skip frame from there.
    box.acknowledge(2000);
    box.rewindTo(2000);
    box.skipFrames = true;
    expect(drain(box, captured)).toEqual([['skip', 2000, 2000], ['audio', 4000, 2000]]);
  });

  it('a skip still growing goes in steps of 0.5 s, at once when closed, drained or asked (speech ended)', () => {
    const box = gatedBox(captured);
    box.skipFrames = true;
    box.decide(0, 320);
    box.decide(3520, 3520);
    expect(drain(box, captured, false)).toEqual([['audio', 0, 320]]); // 3200 skipped so far, still growing
    box.sendSkipNow();
    expect(drain(box, captured, false)).toEqual([['skip', 320, 3200]]);
    box.decide(11_840, 11_840);
    expect(drain(box, captured, false)).toEqual([['skip', 3520, 8320]]); // 0.5 s or more: a step
    box.decide(12_160, 12_160);
    expect(drain(box, captured, false)).toEqual([]);
    box.decide(12_160, 12_480); // audio decided after it: the skip is closed
    expect(drain(box, captured, false)).toEqual([['skip', 11_840, 320], ['audio', 12_160, 320]]);
  });

  it('refuses a decision that goes back', () => {
    const box = gatedBox(captured);
    box.decide(0, 1000);
    expect(() => box.decide(500, 1200)).toThrow(expect.objectContaining({ code: 'REALTIME_INVALID_STATE' }));
  });
});
