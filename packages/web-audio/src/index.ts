export { startCapture, type StartCaptureOptions, type CaptureGateOptions } from './capture/start-capture.js';
export { openMicrophone, type OpenMicrophoneOptions } from './capture/open-microphone.js';
export { Capture, type CaptureDrop, type CaptureEvents, type CaptureState, type CaptureStateChange, type CaptureStats, type CaptureResult } from './capture/capture.js';
export type { CaptureSession } from './capture/session.js';
export { defaultRecoveryDelayMs, type ReacquireRequest, type RecoveryOptions, type WebCaptureEvent, type WebCaptureEventType } from './capture/health.js';
export type { AudioLevel } from './capture/level-meter.js';
export type { FeedTotals } from './capture/sample-feed.js';
export { attachSession, type BrowserSessionGrant } from './session/attach-session.js';
export { WebAudioError, isWebAudioError, type WebAudioErrorCode } from './errors.js';
export { PROCESSOR_NAME, type CaptureMode } from './worklet/protocol.js';
export {
  LiveCaptions, createLiveCaptions, type LiveCaptionsOptions, type LiveCaptionsCredentials, type CredentialsRequest,
} from './live/live-captions.js';
export { IDLE as IDLE_CAPTIONS, type LiveCaptionsSnapshot, type LiveCaptionsStatus } from './live/snapshot.js';
