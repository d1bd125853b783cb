import type { CaptureMode } from '../worklet/protocol.js';
import type { FeedTotals } from './sample-feed.js';

export type CaptureState = 'capturing' | 'muted' | 'paused' | 'stopping' | 'stopped';

/**
 * Where every captured frame went. The books always balance:
 *   capturedFrames = encodedFrames + mutedFrames + pausedFrames (+ frames delivered after stop began while paused/muted)
 *   worklet frames = capturedFrames + droppedFrames (final after stop(): `exact` says the worklet confirmed it)
 * and the session's capturedSamples (what pause/finish report to the server) is `sentSamples`.
 */
export interface CaptureStats {
  readonly transport: CaptureMode;
  /** The AudioContext's rate: what the worklet captures at. */
  readonly sampleRate: number;
  /** The session's resampler kernel: 'wasm', or 'js' under a CSP without 'wasm-unsafe-eval'. */
  readonly kernel: 'js' | 'wasm';
  /** Frames (context rate) the page received from the worklet. */
  readonly capturedFrames: number;
  /**
   * Frames the worklet could not deliver (the page stalled longer than the ring or pool holds: 2 s by
   * default). Live: each loss counts as soon as the page learns of it (when frames flow again, see
   * the `drop` events); after stop(), the worklet's own total.
   */
  readonly droppedFrames: number;
  /** Frames handed to the session's write() (it resamples them at the context's rate), taken or refused. */
  readonly encodedFrames: number;
  /** Frames received while muted: measured by the level meter, never sent. */
  readonly mutedFrames: number;
  /** Frames received while paused: never sent. */
  readonly pausedFrames: number;
  /** 16 kHz samples the session made of the frames it took: its capturedSamples, if this capture is its only writer. */
  readonly sentSamples: number;
  /** Of encodedFrames, those the session refused because it was not taking audio (finishing, ended). */
  readonly refusedFrames: number;
  /**
   * Of encodedFrames, those the worklet's voice gate did not send (the `gate` option): declared to the
   * session as skipped time (the session's `stats.skippedSamples`, `health.savedShare`). 0 ungated.
   */
  readonly skippedFrames: number;
}

/**
 * Audio lost before it reached the page: the worklet had nowhere to put it because the page's thread
 * was stalled longer than the ring (shared) or the batch pool (transfer) holds. Nothing is put in its
 * place: the audio after it follows the audio before it in the session, as with mute. The session
 * itself lost nothing (its capturedSamples counts what it was given), so this is not a session `gap`.
 */
export interface CaptureDrop {
  /** First lost frame, in frames at the context rate since the capture started (the worklet's count). */
  readonly from: number;
  /** End of the lost frames (exclusive). */
  readonly to: number;
  /**
   * Where the cut sits in the session's stream, in 16 kHz samples: stats.sentSamples at the cut (the
   * session's capturedSamples when this capture is its only writer). The session's resampler segment
   * ends at the cut (markDiscontinuity), as at mute, so the audio before it is complete and the audio
   * after starts afresh.
   */
  readonly sessionSample: number;
  /** 'pool': every transfer batch was with the page; 'ring': the shared ring was full. */
  readonly cause: 'pool' | 'ring';
}

/** After stop(): the stats plus the worklet's own totals. */
export interface CaptureResult extends CaptureStats {
  readonly worklet: FeedTotals;
}
