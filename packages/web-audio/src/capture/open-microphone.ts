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
 * The streams openMicrophone() opened, with the constraints it used (the device id aside): a capture
 * given one of them knows it is a microphone it may open again after a loss, the same way.
 */
const opened = new WeakMap<MediaStream, MediaTrackConstraints>();

/** The constraints openMicrophone() opened `stream` with; undefined for any other stream. */
export function microphoneConstraints(stream: MediaStream): MediaTrackConstraints | undefined {
  return opened.get(stream);
}

/**
 * Asks for the microphone with the constraints startCapture uses, and turns a refusal into a
 * WebAudioError (WEB_AUDIO_PERMISSION_DENIED, WEB_AUDIO_DEVICE_NOT_FOUND, WEB_AUDIO_UNSUPPORTED).
 * Call it before anything that costs the service something (reserving a session): a visitor who
 * says no, or has no microphone, then holds nothing. Pass the stream to startCapture with
 * `releaseStream: true` so stop() ends its tracks. startCapture knows a stream this returned is a
 * microphone: after a loss it opens one again with the same constraints (the same device, else the
 * default one), as for a microphone it opened itself; a stream from anywhere else it never re-opens
 * by itself (see RecoveryOptions.reacquire).
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
  let stream: MediaStream;
  try {
    stream = await devices.getUserMedia({ audio });
  } catch (caught) {
    throw WebAudioError.fromGetUserMedia(caught, options.deviceId);
  }
  const { deviceId: _id, ...reopen } = audio;
  opened.set(stream, reopen);
  return stream;
}
