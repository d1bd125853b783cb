/**
 * Capture health: what a capture adapter (a browser's getUserMedia, a Node microphone) says about the
 * device feeding a realtime session. Platform-free, so both adapters report the same shapes and a UI
 * draws either. Positions are the session's captured positions (16 kHz samples, what `capturedSamples`
 * counts); times are milliseconds on the adapter's clock since the capture started.
 */

/**
 * `starting`: opened, no audio yet. `running`: audio flows. `recovering`: the device was lost or
 * stalled and the adapter is re-acquiring it (the session stays open). `stopped`: ended by the user.
 * `failed`: recovery gave up, or was off; terminal.
 */
export type CaptureState = 'starting' | 'running' | 'recovering' | 'stopped' | 'failed';

/**
 * Why the audio broke.
 * - `device-lost`: the device went away (unplugged, its audio-server source removed, the track ended).
 * - `device-changed`: the capture moved to another device (the old one did not come back, or the user
 *   chose one with setDevice()).
 * - `rate-changed`: the same device came back at another rate or channel count.
 * - `suspended`: the system suspended the device or the audio graph (a suspended source, an
 *   interrupted AudioContext); it resumes on its own.
 * - `starved`: audio stopped arriving although the device is there (a throttled page, a stalled
 *   process): the capture fell behind the wall clock by more than the threshold.
 * - `capture-failed`: the capture process or library failed for a reason that names no device.
 */
export type CaptureCause = 'device-lost' | 'device-changed' | 'rate-changed' | 'suspended' | 'starved' | 'capture-failed';

/** A device as the adapter names it. */
export interface CaptureDevice {
  /** What selects it again: a PulseAudio source name, a deviceId, an index. */
  readonly id: string;
  /** For people. */
  readonly label: string;
  /** The rate it runs at now, and its interleaved channels. */
  readonly sampleRate: number;
  readonly channels: number;
}

/**
 * Audio that was never captured: the device was away, suspended or starved. Nothing stands in for it:
 * the session gets the audio before and after back to back, with a segment break (markDiscontinuity)
 * at `atSample`.
 *
 * `from`/`to` place it on the capture timeline, the session's positions plus every earlier gap, i.e.
 * where the missing audio would have been had the device never stopped: `to - from` is its length in
 * 16 kHz samples, measured with the adapter's clock (the device gave none for time it was away).
 */
export interface CaptureGap {
  readonly cause: CaptureCause;
  /** The session's captured position at the break: audio before ends here, audio after starts here. */
  readonly atSample: number;
  /** Start and end (exclusive) on the capture timeline, 16 kHz samples. */
  readonly from: number;
  readonly to: number;
  /** The adapter's clock at the last audio before the break and the first after it. */
  readonly fromMs: number;
  readonly toMs: number;
}

/** Input level of the last audio block, in dBFS (-Infinity for digital silence). */
export interface CaptureLevel {
  readonly rmsDb: number;
  readonly peakDb: number;
}

/** One read of the capture's health; every field is the state at `atMs`. */
export interface CaptureHealth {
  readonly state: CaptureState;
  /** Why the state is what it is (the last event's cause or a short sentence). */
  readonly reason: string;
  readonly device: CaptureDevice | null;
  readonly atMs: number;
  /** From open to the first audio block; null before it. */
  readonly timeToFirstAudioMs: number | null;
  readonly level: CaptureLevel | null;
  /** Device frames captured and handed on, over every device of the capture. */
  readonly capturedFrames: number;
  /** Times audio stopped arriving in time (starvation episodes). */
  readonly underruns: number;
  /** Times audio came in faster than it could be taken and some was dropped. */
  readonly overruns: number;
  /** Device frames dropped by overruns. */
  readonly droppedFrames: number;
  /** Capture clock against the adapter's clock, parts per million (positive: the device runs fast); null until measured. */
  readonly driftPpm: number | null;
  /** How long no audio has arrived (0 while it flows). */
  readonly silentForMs: number;
  readonly gaps: number;
  /** 16 kHz samples missing over every gap. */
  readonly gapSamples: number;
  readonly lastGap: CaptureGap | null;
  /** Times the capture came back after a loss. */
  readonly recoveries: number;
}

/**
 * What a capture tells as it happens. One union, discriminated by `type`; payloads are objects so
 * fields can be added.
 */
export type CaptureEvent =
  | { readonly type: 'device-lost'; readonly cause: CaptureCause; readonly device: CaptureDevice | null; readonly detail: string; readonly atMs: number }
  | { readonly type: 'device-changed'; readonly from: CaptureDevice | null; readonly to: CaptureDevice; readonly atMs: number }
  | { readonly type: 'rate-changed'; readonly device: CaptureDevice; readonly fromRate: number; readonly toRate: number; readonly atMs: number }
  | { readonly type: 'suspended'; readonly device: CaptureDevice | null; readonly atMs: number }
  | { readonly type: 'starved'; readonly behindMs: number; readonly atMs: number }
  | { readonly type: 'recovered'; readonly device: CaptureDevice; readonly cause: CaptureCause; readonly afterMs: number; readonly atMs: number }
  | { readonly type: 'gap'; readonly gap: CaptureGap }
  | { readonly type: 'failed'; readonly error: Error; readonly atMs: number };

export type CaptureEventType = CaptureEvent['type'];
