import type { RealtimeSocketSession } from '@soundclone/core';

/**
 * What a capture needs from a realtime session: a RealtimeSocketSession fits (from attachSession(),
 * or client.stt.realtime.connect()/attach() where a key is at hand). The capture must be the session's
 * only audio writer: it declares the AudioContext's rate with setInputFormat() (so the session's own
 * sampleRate option is not used), writes Float32 blocks with write(), and marks each break in the
 * audio (mute, pause, a loss, stop) with markDiscontinuity(). The session resamples and frames it.
 * With the capture's `gate` option, it writes through the session's gateSource() instead (the
 * worklet's voice gate decides what is sent). Its results reach the capture's Observables through the session's events (`on`/`off`, `state`).
 */
export type CaptureSession = Pick<
  RealtimeSocketSession,
  'write' | 'setInputFormat' | 'markDiscontinuity' | 'stats' | 'pause' | 'resume' | 'on' | 'off' | 'state'
> & Partial<Pick<RealtimeSocketSession, 'gateSource'>>;
