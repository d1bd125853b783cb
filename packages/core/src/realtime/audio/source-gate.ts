import { FRAME, REALTIME } from '../../protocol.js';

/**
 * What a capture source that runs its own voice gate (the AudioWorklet runs a VoiceGate inside
 * `process()`) hands the session, in place of write(): the audio its gate sends, the frames it did
 * not hand over, and the utterance edges it saw. Made by `RealtimeSocketSession.gateSource()`.
 *
 * Frames are input frames at the session's declared input rate (setInputFormat), counted from when
 * the sink was made, over write() and skip() together: the source's own count, the positions its
 * VoiceGate reports. markDiscontinuity() and setInputFormat() on the session go on working as ever.
 */
export interface SourceGateSink {
  /** Audio the source's gate sends, as session.write() takes it; returns what write() returns (0 while paused, …). */
  write(block: Float32Array | Int16Array): number;
  /**
   * `frames` input frames right after what was written, which the source's gate did not hand over:
   * skipped time (docs/protocol.md "Skipped time"). The session encodes digital silence in their
   * place (what a server without skip frames then gets) and declares the stretch skipped, on the
   * 20 ms grid. Returns the frames taken (0 when the session does not take audio).
   */
  skip(frames: number): number;
  /** An utterance edge the source's gate saw, at input frame `frame` of the source's count: emitted as `speech.start` / `speech.end` at the session's position. */
  speech(event: 'speech.start' | 'speech.end', frame: number): void;
}

/**
 * The clock of a source that gates itself: its input frames to the session's captured 16 kHz
 * positions, per resampler segment (a segment of N frames gives floor(N·16000/rate) samples, and the
 * next starts where it ended), and the decisions its write() and skip() make, as outbox positions.
 * Holds no audio; the session applies what it returns.
 */
export class SourceClock {
  /** Input frames through the sink so far. */
  #frames = 0;
  /** Where the current resampler segment began: input frame and captured position. */
  #segmentFrame = 0;
  #segmentBase: number;
  #rate: number;
  /** Where the current run of skips starts (on the grid), or -1 after a write. */
  #runFrom = -1;

  constructor(base: number, rate: number) {
    this.#segmentBase = base;
    this.#rate = rate;
  }

  get frames(): number {
    return this.#frames;
  }

  /** The captured position of input frame `frame` (a frame before the current segment maps to its start). */
  position(frame: number): number {
    return this.#segmentBase + Math.floor((Math.max(0, frame - this.#segmentFrame) * REALTIME.sampleRate) / this.#rate);
  }

  /** `frames` were written: they are sent up to where they end. */
  wrote(frames: number): number {
    this.#frames += frames;
    this.#runFrom = -1;
    return this.position(this.#frames);
  }

  /**
   * `frames` were skipped: returns the captured range of the skip run they belong to (the skips since
   * the last write), on the 20 ms grid (rounded inwards: its edges go as the silence the session
   * encoded), as [from, to); from >= to: nothing to declare yet.
   */
  skipped(frames: number): readonly [number, number] {
    const grid = FRAME.skipGridSamples;
    if (this.#runFrom < 0) {
      const from = this.position(this.#frames);
      this.#runFrom = from % grid === 0 ? from : from + grid - (from % grid);
    }
    this.#frames += frames;
    const to = this.position(this.#frames);
    return [this.#runFrom, to - (to % grid)];
  }

  /** A discontinuity or a new input format: a new segment starts at `produced`, at `rate`. */
  cut(produced: number, rate: number): void {
    this.#segmentFrame = this.#frames;
    this.#segmentBase = produced;
    this.#rate = rate;
    this.#runFrom = -1;
  }
}
