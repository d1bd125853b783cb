import { WebAudioError } from '../errors.js';

export interface OpenMicrophoneOptions {
  /** A microphone by id (from enumerateDevices()); default: the default microphone. */
  readonly deviceId?: string;
  /**
   * getUserMedia audio constraints. Default: echo cancellation, noise suppression and automatic gain
   * control off, because speech recognition does best on the unprocessed signal.
   */
  readonly audio?: MediaTrackConstraints;
  /** Platform object; default navigator.mediaDevices. */
  readonly mediaDevices?: Pick<MediaDevices, 'getUserMedia'>;
}

/**
 * Asks for the microphone with the constraints startCapture uses, and turns a refusal into a
 * WebAudioError (WEB_AUDIO_PERMISSION_DENIED, WEB_AUDIO_DEVICE_NOT_FOUND, WEB_AUDIO_UNSUPPORTED).
 * Call it before anything that costs the service something (reserving a session): a visitor who
 * says no, or has no microphone, then holds nothing. Pass the stream to startCapture with
 * `releaseStream: true` so stop() ends its tracks.
 */
export async function openMicrophone(options: OpenMicrophoneOptions = {}): Promise<MediaStream> {
  if (options.deviceId !== undefined && (typeof options.deviceId !== 'string' || options.deviceId === '')) {
    throw new WebAudioError('WEB_AUDIO_INVALID_OPTION', 'deviceId must be a non-empty string');
  }
  const devices = options.mediaDevices ?? globalThis.navigator?.mediaDevices;
  if (devices === undefined) throw new WebAudioError('WEB_AUDIO_UNSUPPORTED', 'navigator.mediaDevices is not available (a secure context is needed)');
  const audio: MediaTrackConstraints = {
    echoCancellation: false, noiseSuppression: false, autoGainControl: false, ...options.audio,
    ...(options.deviceId !== undefined ? { deviceId: { exact: options.deviceId } } : {}),
  };
  try {
    return await devices.getUserMedia({ audio });
  } catch (caught) {
    throw WebAudioError.fromGetUserMedia(caught, options.deviceId);
  }
}
