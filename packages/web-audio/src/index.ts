export { startCapture, type StartCaptureOptions } from './capture/start-capture.js';
export { openMicrophone, type OpenMicrophoneOptions } from './capture/open-microphone.js';
export { Capture, type CaptureDrop, type CaptureState, type CaptureStats, type CaptureResult } from './capture/capture.js';
export type { CaptureSession } from './capture/session.js';
export type { AudioLevel } from './capture/level-meter.js';
export type { FeedTotals } from './capture/sample-feed.js';
export { attachSession, type BrowserSessionGrant } from './session/attach-session.js';
export { WebAudioError, isWebAudioError, type WebAudioErrorCode } from './errors.js';
export { PROCESSOR_NAME, type CaptureMode } from './worklet/protocol.js';
