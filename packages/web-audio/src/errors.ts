import { SoundCloneError } from '@soundclone/core';

/** Stable codes of WebAudioError (docs/errors.md "WebAudioError"). */
export type WebAudioErrorCode =
  | 'WEB_AUDIO_INVALID_OPTION'
  | 'WEB_AUDIO_UNSUPPORTED'
  | 'WEB_AUDIO_UNSUPPORTED_RATE'
  | 'WEB_AUDIO_SHARED_MEMORY_UNAVAILABLE'
  | 'WEB_AUDIO_PERMISSION_DENIED'
  | 'WEB_AUDIO_DEVICE_NOT_FOUND'
  | 'WEB_AUDIO_NO_AUDIO_TRACK'
  | 'WEB_AUDIO_CONTEXT_CLOSED'
  | 'WEB_AUDIO_WORKLET_LOAD_FAILED'
  | 'WEB_AUDIO_STOPPED'
  | 'WEB_AUDIO_CAPTURE_FAILED'
  | 'WEB_AUDIO_DEVICE_LOST'
  | 'WEB_AUDIO_SESSION_ENDED';

/** Browser capture could not start, failed while running, or a call came after stop(). Match on `code`. */
export class WebAudioError extends SoundCloneError {
  override name = 'WebAudioError' as const;
  declare readonly code: WebAudioErrorCode;

  constructor(code: WebAudioErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }

  /** getUserMedia's DOMException, by its name, as one of ours (the original stays as `cause`). */
  static fromGetUserMedia(caught: unknown, deviceId: string | undefined): WebAudioError {
    const name = caught instanceof Error ? caught.name : '';
    const detail = caught instanceof Error ? caught.message : String(caught);
    if (name === 'NotAllowedError' || name === 'SecurityError') {
      return new WebAudioError('WEB_AUDIO_PERMISSION_DENIED', `microphone permission was denied: ${detail}`, { cause: caught });
    }
    if (name === 'NotFoundError' || name === 'OverconstrainedError') {
      const which = deviceId === undefined ? 'no audio input device' : `no audio input device with id ${deviceId}`;
      return new WebAudioError('WEB_AUDIO_DEVICE_NOT_FOUND', `${which}: ${detail}`, { cause: caught });
    }
    return new WebAudioError('WEB_AUDIO_UNSUPPORTED', `getUserMedia failed (${name || 'error'}): ${detail}`, { cause: caught });
  }
}

/** Matches by class or, across duplicate copies of this package, by name. */
export function isWebAudioError(value: unknown): value is WebAudioError {
  return value instanceof WebAudioError || (value instanceof Error && value.name === 'WebAudioError' && typeof (value as { code?: unknown }).code === 'string');
}
