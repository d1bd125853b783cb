import { REALTIME } from '@soundclone/core/internal';
import type { RecognizedSegment, StreamEvent } from '../../recognition/recognizer.js';

/**
 * Captured time a client declared skipped (skip frames, docs/protocol.md "Skipped time"): its voice
 * gate heard silence there and sent no audio. The session's received cursor moves over it, but the
 * recogniser is fed nothing for it, so the recogniser's clock (the audio it was fed) falls behind
 * capture time by every sample skipped so far. This module keeps that count and moves the times the
 * recogniser reports back into capture time.
 *
 * Why one offset is exact: the session commits the open segment before a skip is counted (a skip is
 * silence to the recogniser: a segment never spans one), so every segment, and every word in it,
 * comes from one stretch of audio between two skips, and the offset of that stretch is the count of
 * the skips before it. Times are milliseconds: an offset that is not a whole number of milliseconds
 * (16 samples) is rounded with each time.
 */
export class SkippedTime {
  #samples = 0n;
  /**
   * Audio an earlier recogniser stream of the session was fed and the current one does not count: a
   * stream that another node opened fresh (its engine has no restart points) counts from the open
   * segment's start, not the session's. Its times move by this too.
   */
  #uncounted = 0n;

  /** Samples skipped so far. */
  get samples(): bigint {
    return this.#samples;
  }

  add(samples: bigint): void {
    this.#samples += samples;
  }

  /** The current recogniser stream started fresh after `samples` of audio fed to an earlier one. */
  startedAfter(samples: bigint): void {
    this.#uncounted = samples;
  }

  /** The recogniser's events with their times in capture time (the same array when there is nothing to move). */
  shift(events: StreamEvent[]): StreamEvent[] {
    const offset = this.#samples + this.#uncounted;
    if (offset === 0n || events.length === 0) return events;
    const offsetMs = (Number(offset) * 1000) / REALTIME.sampleRate;
    return events.map((event) => (event.type === 'segment' ? { ...event, segment: shiftSegment(event.segment, offsetMs) } : event));
  }
}

function shiftSegment(segment: RecognizedSegment, offsetMs: number): RecognizedSegment {
  const at = (ms: number): number => Math.round(ms + offsetMs);
  return {
    ...segment,
    startMs: at(segment.startMs),
    endMs: at(segment.endMs),
    words: segment.words.map((word) => ({ ...word, startMs: at(word.startMs), endMs: at(word.endMs) })),
  };
}
