import { SoundCloneError } from '@soundclone/core';

/** Codes of MicrophoneError (docs/errors.md "MicrophoneError"). */
export type MicrophoneErrorCode =
  | 'MIC_NO_DEVICE'
  | 'MIC_DEVICE_NOT_FOUND'
  | 'MIC_PERMISSION_DENIED'
  | 'MIC_BACKEND_UNAVAILABLE'
  | 'MIC_CAPTURE_FAILED'
  | 'MIC_DEVICE_LOST';

/** The system microphone could not be opened or stopped delivering audio. */
export class MicrophoneError extends SoundCloneError {
  override name = 'MicrophoneError';
  declare readonly code: MicrophoneErrorCode;
  /** The backend that failed (pvrecorder, parec, arecord, sox), when one was chosen. */
  readonly backend: string | undefined;

  constructor(code: MicrophoneErrorCode, message: string, options: { cause?: unknown; backend?: string } = {}) {
    super(code, message, options.cause === undefined ? undefined : { cause: options.cause });
    this.backend = options.backend;
  }

  static noDevice(backend: string, detail = ''): MicrophoneError {
    return new MicrophoneError('MIC_NO_DEVICE', `no microphone found (${backend})${detail === '' ? '' : `: ${detail}`}`, { backend });
  }

  static notFound(backend: string, wanted: string | number, available: readonly string[]): MicrophoneError {
    const list = available.length === 0 ? 'none' : available.map((name, i) => `${i}: ${name}`).join(', ');
    return new MicrophoneError('MIC_DEVICE_NOT_FOUND', `no microphone matches ${JSON.stringify(wanted)} (${backend}); available: ${list}`, { backend });
  }
}

/** Codes of AudioSourceError (docs/errors.md "AudioSourceError"). */
export type AudioSourceErrorCode = 'SOURCE_UNSUPPORTED_FORMAT' | 'SOURCE_READ_FAILED' | 'SOURCE_INVALID_OPTION';

/** A file, raw PCM stream or stdin that cannot be read as audio. */
export class AudioSourceError extends SoundCloneError {
  override name = 'AudioSourceError';
  declare readonly code: AudioSourceErrorCode;

  constructor(code: AudioSourceErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

export function isMicrophoneError(value: unknown): value is MicrophoneError {
  return value instanceof MicrophoneError || (value instanceof Error && value.name === 'MicrophoneError' && typeof (value as { code?: unknown }).code === 'string');
}

export function isAudioSourceError(value: unknown): value is AudioSourceError {
  return value instanceof AudioSourceError || (value instanceof Error && value.name === 'AudioSourceError' && typeof (value as { code?: unknown }).code === 'string');
}
