import type { RealtimeSocketSession } from '@soundclone/core';

/**
 * What a capture needs from a realtime session: a RealtimeSocketSession fits (from attachSession(),
 * or client.stt.realtime.connect()/attach() where a key is at hand). The capture must be the session's
 * only audio writer: it sends PCM16 through writePcm16(), so the session's own sampleRate is not used.
 * Its results reach the capture's Observables through the session's events (`on`/`off`, `state`).
 */
export type CaptureSession = Pick<RealtimeSocketSession, 'writePcm16' | 'pause' | 'resume' | 'on' | 'off' | 'state'>;
