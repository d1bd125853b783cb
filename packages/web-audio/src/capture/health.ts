import type { CaptureEvent as CoreCaptureEvent, CaptureDevice } from '@soundclone/core';

/**
 * What a browser capture tells as it happens (its `event` listeners): core's capture events, the same a
 * Node microphone reports, plus what only the browser says about a device:
 *   'track-muted' / 'track-unmuted'  the browser or the OS muted the track (it delivers silence meanwhile;
 *                                    reported, nothing to recover)
 *   'devices-changed'                navigator.mediaDevices fired devicechange; `present`: the capturing
 *                                    device is still listed (when it is not, 'device-lost' follows)
 * `detail` of 'device-lost' says which platform signal it was: 'track-ended', 'device-removed',
 * 'context-closed'.
 */
export type WebCaptureEvent =
  | CoreCaptureEvent
  | { readonly type: 'track-muted'; readonly device: CaptureDevice; readonly atMs: number }
  | { readonly type: 'track-unmuted'; readonly device: CaptureDevice; readonly atMs: number }
  | { readonly type: 'devices-changed'; readonly present: boolean; readonly atMs: number };

export type WebCaptureEventType = WebCaptureEvent['type'];

/** What a reacquire() call is told: which attempt this is, and which platform signal lost the stream. */
export interface ReacquireRequest {
  /** 1-based; the attempts and their delays are RecoveryOptions.attempts and nextDelayMs. */
  readonly attempt: number;
  readonly detail: 'track-ended' | 'device-removed' | 'context-closed';
}

/** When and how the capture looks for a device after a loss. */
export interface RecoveryOptions {
  /** Default true. false: a lost device stops the capture cleanly (the tab-audio case: nothing to reopen). */
  readonly enabled?: boolean;
  /**
   * How a lost stream is replaced, when the app knows better than getUserMedia: called once per
   * attempt, it returns the stream to go on with (owned like the first one: stopped by the capture
   * with releaseStream), or null to give up now (WEB_AUDIO_DEVICE_LOST); a throw counts as a failed
   * attempt. When given, it is the only way the capture replaces a lost stream. Without it, a
   * microphone (startCapture opened it, or openMicrophone() did) is opened again by getUserMedia (the
   * same device, else the default one), and a stream the app got elsewhere (a screen share's audio,
   * a WebRTC track, a processed mix) is never re-opened: its loss ends the capture with
   * WEB_AUDIO_DEVICE_LOST, everything before it in the session. A closed AudioContext under such a
   * stream whose track still runs is no device question: the same stream goes on in a new context.
   */
  readonly reacquire?: (request: ReacquireRequest) => Promise<MediaStream | null>;
  /** Attempts before giving up with WEB_AUDIO_DEVICE_LOST (default 8). Each tries the same device, then the default one. */
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
