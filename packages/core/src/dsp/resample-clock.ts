/**
 * The integer bookkeeping of a resampling stream, kept apart from the arithmetic on samples so that
 * its exactness can be checked over days of audio in seconds.
 *
 * Output n stands at input instant n·down/up. It is complete once input frame
 * floor(n·down/up) + latency has arrived, and a stream of N frames owes floor(N·up/down) outputs in
 * all. Every product here stays below 2^53 for years of audio at these rates, so plain numbers are
 * exact.
 */
export class ResampleClock {
  readonly up: number;
  readonly down: number;
  /** Input frames an output waits for past its own instant: half the filter. */
  readonly latencyFrames: number;

  constructor(up: number, down: number, latencyFrames: number) {
    this.up = up;
    this.down = down;
    this.latencyFrames = latencyFrames;
  }

  /** Outputs complete once `inputFrames` frames have arrived (the count process() has produced). */
  completeOutputs(inputFrames: number): number {
    const last = inputFrames - 1 - this.latencyFrames;
    if (last < 0) return 0;
    // The largest n with floor(n·down/up) ≤ last, plus one.
    return Math.floor((last * this.up + this.up - 1) / this.down) + 1;
  }

  /** Outputs a stream of `inputFrames` frames owes in all, once flushed. */
  totalOutputs(inputFrames: number): number {
    return Math.floor((inputFrames * this.up) / this.down);
  }

  /** An upper bound on the outputs `frames` more input frames can complete. */
  maxOutputsFor(frames: number): number {
    return Math.ceil((frames * this.up) / this.down) + 1;
  }
}
