import type { CaptureMode } from '../worklet/protocol.js';
import type { CaptureResult, CaptureStats } from './capture-types.js';
import type { FeedTotals } from './sample-feed.js';
import type { SessionWriter } from './session-writer.js';

/**
 * Where a capture's frames went, across all its graphs (see CaptureStats for how the books balance):
 * what the page received and did with it, what the worklets lost, and the worklets' own totals of the
 * graphs already ended (a capture's totals are the sum over its graphs).
 */
export class CaptureBooks {
  captured = 0;
  muted = 0;
  paused = 0;
  dropped = 0;
  overruns = 0;
  #worklet: FeedTotals = { frames: 0, dropped: 0, delivered: 0, exact: true };

  /** The worklet totals of every graph ended so far. */
  get worklet(): FeedTotals {
    return this.#worklet;
  }

  /** A stretch of `frames` the worklet could not deliver (a drop). */
  drop(frames: number): void {
    this.dropped += frames;
    this.overruns++;
  }

  /** A graph ended with these worklet totals. */
  addTotals(t: FeedTotals): void {
    const p = this.#worklet;
    this.#worklet = { frames: p.frames + t.frames, dropped: p.dropped + t.dropped, delivered: p.delivered + t.delivered, exact: p.exact && t.exact };
  }

  stats(transport: CaptureMode, sampleRate: number, writer: SessionWriter): CaptureStats {
    return {
      transport,
      sampleRate,
      kernel: writer.kernel,
      capturedFrames: this.captured,
      droppedFrames: this.dropped,
      encodedFrames: writer.framesIn,
      mutedFrames: this.muted,
      pausedFrames: this.paused,
      sentSamples: writer.sentSamples,
      refusedFrames: writer.refusedFrames,
      skippedFrames: writer.skippedFrames,
    };
  }

  /** After the last graph ended: the stats, with the worklets' own count of dropped frames. */
  result(stats: CaptureStats): CaptureResult {
    const worklet = this.#worklet;
    return { ...stats, droppedFrames: worklet.dropped, worklet };
  }
}
