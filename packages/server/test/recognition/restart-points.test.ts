import { describe, expect, it } from 'vitest';
import { EnergyRecognizer } from '../../src/recognition/energy-recognizer.js';
import type { RecognizerStream, StreamEvent } from '../../src/recognition/recognizer.js';
import { speech } from '../realtime/support.js';

type Segment = Extract<StreamEvent, { type: 'segment' }>;

/** Pushes `pcm` in 20 ms blocks, flushing after `flushAt` samples when given; the segments it made, with the checkpoint after each. */
function run(stream: RecognizerStream, pcm: Int16Array, flushAt?: number): Array<{ segment: Segment; checkpoint: ReturnType<NonNullable<RecognizerStream['checkpoint']>> }> {
  const out: Array<{ segment: Segment; checkpoint: ReturnType<NonNullable<RecognizerStream['checkpoint']>> }> = [];
  const take = (events: StreamEvent[]): void => {
    for (const event of events) if (event.type === 'segment') out.push({ segment: event, checkpoint: stream.checkpoint?.() });
  };
  for (let at = 0; at < pcm.length; at += 320) {
    const end = Math.min(pcm.length, at + 320);
    if (flushAt !== undefined && at < flushAt && end > flushAt) {
      take(stream.push(pcm.subarray(at, flushAt)));
      take(stream.flush());
      take(stream.push(pcm.subarray(flushAt, end)));
      continue;
    }
    take(stream.push(pcm.subarray(at, end)));
  }
  take(stream.flush());
  return out;
}

/**
 * The deterministic recognizer's restart points (RecognizerStream.checkpoint), which a node taking a
 * realtime session over uses to rebuild its recogniser from the open segment alone: a stream opened at
 * a checkpoint and fed the audio from there recognises exactly what the first stream did after it.
 */
describe('energy recognizer restart points', () => {
  const recognizer = new EnergyRecognizer();
  const options = { maxSpeakers: 1 };

  it.each([
    ['no flush', undefined],
    ['a flush mid-segment (a pause) before the restart point', 3 * 16_000 + 123],
  ] as const)('a stream restarted at any committed line goes on exactly as the first (%s)', (_name, flushAt) => {
    const pcm = speech(8, 3);
    const whole = run(recognizer.openStream(options), pcm, flushAt);
    expect(whole.length).toBeGreaterThanOrEqual(8);
    for (const [index, { checkpoint }] of whole.entries()) {
      if (checkpoint === undefined) throw new Error('the energy stream gives a checkpoint after every segment');
      if (flushAt !== undefined && checkpoint.atSample < flushAt) continue;
      const rest = run(recognizer.openStream({ ...options, resume: checkpoint.state }), pcm.subarray(checkpoint.atSample));
      expect(rest.map((r) => r.segment)).toEqual(whole.slice(index + 1).map((r) => r.segment));
    }
  });

  it('ignores a resume state it did not make: a fresh stream', () => {
    const pcm = speech(2, 1);
    const fresh = run(recognizer.openStream(options), pcm).map((r) => r.segment);
    for (const resume of [null, 'x', { frameIndex: -1, prevSign: 0 }, { frameIndex: 1.5, prevSign: 0 }, { frameIndex: 0, prevSign: 2 }]) {
      expect(run(recognizer.openStream({ ...options, resume }), pcm).map((r) => r.segment)).toEqual(fresh);
    }
  });
});
