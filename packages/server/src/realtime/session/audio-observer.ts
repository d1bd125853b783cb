/**
 * A session's received audio grew: `receivedSamples` is its position right after the frame was
 * accepted (a frame of duplicates only is accepted too, and reports the unchanged position).
 */
export interface AcceptedAudio {
  readonly sessionId: string;
  readonly receivedSamples: bigint;
}

/**
 * Told synchronously after each audio frame a realtime session on this node accepts, once the
 * service handled it (stored, recognised, acked, rotated when due) and before it reads the next
 * message. A test that must act at an exact point of a stream (a fault at sample N) acts here.
 * It runs on the audio path: it must be quick.
 */
export type AudioObserver = (audio: AcceptedAudio) => void;

/**
 * Calls the observer; what it throws does not reach the session (whose frame was accepted) but is
 * thrown again on its own, where the process reports it as any uncaught error.
 */
export function tellObserver(observer: AudioObserver | undefined, sessionId: string, receivedSamples: bigint): void {
  if (observer === undefined) return;
  try {
    observer({ sessionId, receivedSamples });
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}
