import type { AudioLevel } from './level-meter.js';

/**
 * Why audio stopped coming from the device, or why the capture moved to another one:
 *   'track-ended'       the MediaStreamTrack ended (device unplugged, permission revoked, the browser ended it)
 *   'device-removed'    navigator.mediaDevices reported a device change and the device is no longer listed
 *   'context-closed'    the AudioContext was closed (by the app, or the browser tore it down)
 *   'context-suspended' the AudioContext was suspended or interrupted (a phone call, the OS took the device)
 *   'device-switch'     the app asked for another device (capture.setDevice())
 */
export type CaptureGapCause = 'track-ended' | 'device-removed' | 'context-closed' | 'context-suspended' | 'device-switch';

/** A device as the capture used it. */
export interface CaptureDevice {
  /** The track's deviceId ('' when the stream does not say: a mix, tab audio). */
  readonly deviceId: string;
  readonly label: string;
  /** The AudioContext's rate, at which this device's frames were captured. */
  readonly sampleRate: number;
}

/**
 * Audio that never reached the capture: from the moment the device (or context) stopped delivering
 * to the first frame of the graph that replaced it. Nothing is put in its place: the session gets the
 * audio before the gap, a discontinuity mark, and the audio after it, each resampled on its own.
 *
 * Exact positions: `sessionSample` is where the cut sits in the session's 16 kHz stream (the audio
 * before it is everything the capture sent, resampler tail included: stats.sentSamples at the cut);
 * `framesBefore` are the frames the lost graph delivered, at `before.sampleRate`. Only the length of the
 * missing stretch is a wall-clock measurement (no device clock ran during it).
 */
export interface CaptureGap {
  readonly cause: CaptureGapCause;
  /** The cut in the session's 16 kHz stream: the session's capturedSamples before the gap. */
  readonly sessionSample: number;
  /** Frames the lost device's graph delivered (its whole run, at before.sampleRate). */
  readonly framesBefore: number;
  readonly before: CaptureDevice;
  /** The device capturing after the gap; undefined while recovering, or when none came back. */
  readonly after: CaptureDevice | undefined;
  /** Date.now() when the loss was detected. */
  readonly startedAt: number;
  /** Date.now() when the next graph delivered its first frame; undefined while open. */
  readonly endedAt: number | undefined;
  /** Audio missing, by the wall clock (endedAt - the last frame before the loss), ms; undefined while open. */
  readonly missingMs: number | undefined;
}

/**
 * Everything the capture noticed, in order, each once (capture.events$). Payloads are objects so
 * fields can be added. `at` is Date.now() when it was detected.
 */
export type CaptureEvent =
  /** Audio stopped coming: the capture marks the cut and starts recovering (if enabled). */
  | { readonly type: 'device-lost'; readonly cause: CaptureGapCause; readonly device: CaptureDevice; readonly at: number }
  /** The track was muted by the browser or the OS (it delivers silence meanwhile): reported, not recovered. */
  | { readonly type: 'track-muted'; readonly device: CaptureDevice; readonly at: number }
  | { readonly type: 'track-unmuted'; readonly device: CaptureDevice; readonly at: number }
  /** navigator.mediaDevices fired devicechange; `present` says whether the current device is still listed. */
  | { readonly type: 'devices-changed'; readonly present: boolean; readonly at: number }
  /** The AudioContext left 'running' ('suspended', 'interrupted'); the capture asks it to resume when it is its own. */
  | { readonly type: 'context-suspended'; readonly state: string; readonly at: number }
  | { readonly type: 'context-resumed'; readonly at: number }
  /** A recovery attempt: which device it asks for (undefined: the default one). */
  | { readonly type: 'recovering'; readonly attempt: number; readonly deviceId: string | undefined; readonly at: number }
  /** Audio flows again from `device`; the gap is closed. */
  | { readonly type: 'recovered'; readonly gap: CaptureGap; readonly device: CaptureDevice; readonly detectMs: number; readonly recoverMs: number; readonly at: number }
  /** The device now runs at another rate (after a recovery or a switch): the session resamples from the new one. */
  | { readonly type: 'rate-changed'; readonly from: number; readonly to: number; readonly at: number }
  /** Captured audio fell behind the wall clock by more than starvationMs: audio is not arriving. */
  | { readonly type: 'starved'; readonly behindMs: number; readonly at: number }
  /** Audio arrives again after starvation. */
  | { readonly type: 'fed'; readonly starvedMs: number; readonly at: number }
  /** No device came back within the retries: the capture stops with `failure` (WEB_AUDIO_DEVICE_LOST). */
  | { readonly type: 'recovery-failed'; readonly attempts: number; readonly at: number };

export type CaptureEventType = CaptureEvent['type'];

/**
 *   'starting'    no audio yet
 *   'ok'          audio arrives in step with the wall clock
 *   'starved'     audio fell behind the wall clock by more than starvationMs (see CaptureEvent 'starved')
 *   'muted'       the track is muted by the browser or the OS
 *   'suspended'   the AudioContext is not running
 *   'recovering'  the device was lost; looking for it or the default one
 *   'stopped'     stop() ran (or the capture failed: see capture.failure)
 */
export type CaptureHealthState = 'starting' | 'ok' | 'starved' | 'muted' | 'suspended' | 'recovering' | 'stopped';

/** A capture's health, as capture.health returns it and capture.health$ emits it (on change, and about 4 times a second). */
export interface CaptureHealth {
  readonly state: CaptureHealthState;
  /** The device capturing now (the last one while recovering). */
  readonly device: CaptureDevice;
  /** From startCapture() to the first frame, ms; undefined before it. */
  readonly timeToFirstAudioMs: number | undefined;
  /** Input level over the last window. */
  readonly level: AudioLevel;
  /** Wall-clock time since the last frame arrived, ms (the "no audio for N s" of a UI); 0 before the first. */
  readonly silentForMs: number;
  /** Starvation episodes (audio fell behind the wall clock by more than starvationMs). */
  readonly underruns: number;
  /** Stretches the worklet dropped because the page stalled (drops$), and their frames. */
  readonly overruns: number;
  readonly droppedFrames: number;
  /**
   * The device clock against the wall clock, parts per million (positive: the device delivers more
   * audio than the wall clock says it should). Measured over the current device's run, restarted at each
   * gap and starvation; undefined until 10 s of it.
   */
  readonly driftPpm: number | undefined;
  /** Gaps so far (device losses and switches), the last one, and recoveries that succeeded. */
  readonly gaps: number;
  readonly lastGap: CaptureGap | undefined;
  readonly recoveries: number;
}

/** When and how the capture looks for a device after a loss. */
export interface RecoveryOptions {
  /** Default true. false: a lost device stops the capture, as before recovery existed (the tab-audio case). */
  readonly enabled?: boolean;
  /** Attempts before giving up with WEB_AUDIO_DEVICE_LOST (default 8). */
  readonly attempts?: number;
  /**
   * Delay before attempt n (1-based), ms; null gives up. Default: 0, then 250 ms doubling up to 4 s
   * (about 15 s in all with the default attempts). A devicechange event cuts a pending delay short.
   */
  readonly nextDelayMs?: (attempt: number) => number | null;
}

/** The default delay before recovery attempt n: immediate, then capped exponential. */
export function defaultRecoveryDelayMs(attempt: number): number {
  if (attempt <= 1) return 0;
  return Math.min(4000, 250 * 2 ** (attempt - 2));
}
