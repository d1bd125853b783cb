import { WebAudioError } from '../errors.js';

/**
 * Why a capture stopped by itself: its audio could not be handed to the session
 * (WEB_AUDIO_CAPTURE_FAILED, the cause attached). With `asIs`, a WebAudioError that already says why
 * (the session refused the new device's rate) is kept as it is.
 */
export function captureFailure(error: unknown, asIs = false): WebAudioError {
  if (asIs && error instanceof WebAudioError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new WebAudioError('WEB_AUDIO_CAPTURE_FAILED', `captured audio could not be handed to the session (${detail}); the capture stopped`, { cause: error });
}

/** A lost device that did not come back within the recovery attempts (`byApp`: the app's reacquire() gave none). */
export function deviceLostFailure(detail: string, attempts: number, byApp = false): WebAudioError {
  return new WebAudioError('WEB_AUDIO_DEVICE_LOST', byApp
    ? `the stream was lost (${detail}) and recovery.reacquire gave no usable one in ${attempts} attempts; the capture stopped`
    : `the microphone was lost (${detail}) and neither it nor a default one came back after ${attempts} attempts; the capture stopped`);
}

/** A stream the app passed, lost, with nothing that may replace it (no recovery.reacquire). */
export function streamLostFailure(detail: string): WebAudioError {
  return new WebAudioError('WEB_AUDIO_DEVICE_LOST', `the stream the app passed was lost (${detail}); the capture does not re-open a stream it did not open (recovery.reacquire can supply the next one), so it stopped`);
}

/** setDevice() when stop() came before the new device took over. */
export function stoppedBeforeSwitch(): WebAudioError {
  return new WebAudioError('WEB_AUDIO_STOPPED', 'setDevice() did not complete: stop() came before the new device took over; the capture stopped on the old one');
}

/** An error no caller waits for (the app's callback threw, the capture failed): reported as the browser reports a listener's exception. */
export function reportLater(error: unknown): void {
  const report = (globalThis as { reportError?: (error: unknown) => void }).reportError;
  if (typeof report === 'function') report(error);
  else setTimeout(() => {
    throw error;
  });
}
