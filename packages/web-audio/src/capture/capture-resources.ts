import type { DeviceEvents } from './device-watch.js';
import type { CaptureGraph, GraphInput } from './graph.js';
import type { RecoveryOptions } from './health.js';
import type { FeedSink } from './sample-feed.js';
import type { SessionWriter } from './session-writer.js';
import type { CaptureSession } from './session.js';

/** The resources a capture holds, released by stop(); built by startCapture(). */
export interface CaptureResources {
  /** The first device's graph. */
  readonly graph: CaptureGraphParts;
  /** The context's audio into the session (push, endSegment at each cut, setRate for a new graph). */
  readonly writer: SessionWriter;
  readonly session: CaptureSession;
  readonly levelWindowMs: number;
  readonly stopTimeoutMs: number;
  readonly onSamples: ((block: Float32Array) => void) | undefined;
  readonly signal: AbortSignal | undefined;
  /** Builds the next graph after a loss or for setDevice(); undefined: a lost device stops the capture. */
  readonly rebuild?: ((input: GraphInput, sink: FeedSink) => Promise<CaptureGraph>) | undefined;
  readonly recovery?: RecoveryOptions | undefined;
  /** Audio this far behind the wall clock is starvation (default 1500 ms). */
  readonly starvationMs?: number | undefined;
  /** navigator.mediaDevices, for devicechange; undefined: not watched. */
  readonly devices?: DeviceEvents | undefined;
  /** performance.now() when startCapture was called (time to first audio). */
  readonly startedAt?: number | undefined;
}

/** A graph as the capture uses it (a Node test harness passes one without a track). */
export type CaptureGraphParts = Omit<CaptureGraph, 'track' | 'deviceId' | 'label' | 'origin' | 'audio'> & {
  readonly track?: MediaStreamTrack | undefined;
  readonly deviceId?: string;
  readonly label?: string;
  /** Default 'microphone'. */
  readonly origin?: CaptureGraph['origin'];
  readonly audio?: MediaTrackConstraints | undefined;
};
