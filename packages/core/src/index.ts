/**
 * @soundclone/core: the public entry. Every name here is a promise kept across minor versions: what an
 * application calls (the REST client, the realtime session, live captions, webhook verification, the
 * encode path the session runs), the errors with the one guard that tells them apart, and the types
 * those signatures use. Machinery the sibling packages, the bench and the tests share (parsers, state
 * tables, wire constants, defaults tables, measurement helpers, the per-class pieces of the captions
 * and the rings) lives in `@soundclone/core/internal`, which carries no compatibility promise.
 */
export { SoundCloneError } from './errors/base.js';
export { isSoundCloneError, type SoundCloneErrorClass } from './errors/guards.js';
export { DspError, type DspErrorCode } from './errors/dsp-error.js';

// --- encode path: the session's (FrameEncoder), and the pieces an application may run on their own ---
export { SUPPORTED_RATES, isSupportedRate, type SupportedRate } from './dsp/rates.js';
export type { ResamplerQuality, QualityPreset } from './dsp/filter-design.js';
export { Resampler, type ResamplerOptions, type ResamplerKernel, type NonFinitePolicy, type SampleBlock } from './dsp/resampler.js';
export { FrameEncoder, type FrameEncoderOptions, type EncodedFrame } from './dsp/frame-encoder.js';
export { EnergyVoiceDetector, type VoiceDetector, type EnergyDetectorOptions } from './dsp/voice-detector.js';
export { encodePcm16, decodePcm16, type Pcm16Options, type Pcm16NonFinite } from './dsp/pcm16.js';
export { SampleRing, type SampleKind, type SampleRingOptions, type SampleRingHandle, type RingViews } from './dsp/sample-ring.js';
export type { RingSegments } from './dsp/sample-ring.js';
export type { SampleArrayOf } from './dsp/ring-types.js';

// --- REST client ---
export { SoundClone } from './client/soundclone.js';
export type { SoundCloneOptions } from './client/options.js';
// The resources a client holds (client.stt, client.voices, ...): types to name them by, built by SoundClone.
export type { User, Tts } from './client/resources/account.js';
export type { Covers } from './client/resources/covers.js';
export type { Uploads, Downloads } from './client/resources/media.js';
export type { Voices } from './client/resources/voices.js';
export type { Stt } from './client/stt/stt.js';
export type { Transcriptions } from './client/stt/transcriptions.js';
export type { Realtime } from './client/stt/realtime.js';
export type { CallOptions, Logger, RetryMode } from './http/transport.js';
export type { PageRequest, Pager, Cursor } from './client/pagination.js';
export type { CreateVoiceParams, SaveDesignParams } from './client/resources/voices.js';
export type { VoiceFileInput } from './client/voices/voice-files.js';
export type { VoiceFileType } from './client/voices/sniff.js';
export type { UploadSource, UploadOptions, DownloadResult } from './client/resources/media.js';
export type { CreateTranscriptionOptions, WaitOptions, WatchOptions } from './client/stt/transcriptions.js';
export { isTerminalStatus, type PollOptions } from './client/stt/task-polling.js';
export type { BackoffPolicy } from './http/retry-timing.js';
export type { CountInput } from './util/decimal.js';

// --- errors, told apart with isSoundCloneError(value, Class) (every code in docs/errors.md) ---
export {
  ApiError, AuthenticationError, NotFoundError, IdempotencyConflictError, InputInvalidError, MediaFetchError, RateLimitError,
  InsufficientCharactersError, QuotaExceededError, ServiceUnavailableError, ServerError,
  type Violation, type ApiErrorInit,
} from './errors/api-errors.js';
export {
  ConnectionError, RequestTimeoutError, AbortError, ValidationError, WaitTimeoutError, ResponseFormatError, BatchIncompleteError,
  type ResponseFormatCode,
} from './errors/client-errors.js';
export { WebhookVerificationError, type WebhookErrorCode } from './errors/webhook-errors.js';

// --- webhooks ---
export { verifyWebhook, type VerifyOptions, type VerifiedWebhook } from './webhooks/verify.js';
export { createWebhookVerifier, type WebhookVerifier, type WebhookVerifierOptions } from './webhooks/verifier.js';
export type { HeaderBag } from './webhooks/signature-header.js';
export type { WebhookEvent } from './webhooks/event.js';

// --- resource shapes (the value lists their unions are drawn from are in ./internal, with the wire facts) ---
export type { ServerMessageType } from './protocol.js';
export type * from './types/account.js';
export type * from './types/transcription.js';
export type * from './types/realtime.js';
export type * from './types/media.js';
export type * from './types/capture-health.js';

// --- realtime session ---
export { RealtimeSocketSession } from './realtime/realtime-session.js';
export type { RealtimeSocketOptions, RealtimeSessionInit, RealtimeRest, OperationOptions } from './realtime/options/options.js';
export type { RealtimeConnectParams, RealtimeAttachParams } from './client/stt/realtime.js';
export { DefaultReconnectPolicy, type ReconnectPolicy, type ReconnectContext, type DefaultReconnectPolicyOptions } from './realtime/recovery/reconnect-policy.js';
export type { CredentialsProvider, SocketCredentials } from './realtime/socket/credentials.js';
export type { AckWatchOptions } from './realtime/watch/ack-watch-options.js';
export type { LossClass } from './realtime/recovery/loss-classes.js';
export { RealtimeError, type RealtimeErrorCode } from './errors/realtime-error.js';
export type { SessionState, StateChange } from './realtime/session-state.js';
export type { SessionLine, LineUpdate, SupplementKind, SupplementMessage } from './realtime/transcript/line-store.js';
export type { AudioStats, Gap, InputFormat } from './realtime/audio/outbox.js';
export type { GateOptions } from './realtime/audio/session-gate.js';
export type { ServerMessage, WireLine } from './realtime/messages/server-messages.js';
export type {
  SessionReadyMessage, AudioAckMessage, PartialMessage, LineMessage, AlignmentMessage, EntitiesMessage, RevisionMessage, LanguageMessage,
  UsageUpdatedMessage, NoticeMessage, PausedMessage, ResumedMessage, FinishedMessage, SocketErrorMessage, PingMessage, PongMessage, SocketRecycleMessage,
} from './realtime/messages/server-messages.js';
export type { RealtimeSessionEvents, RealtimeFinishResult, SessionHealth, HealthReportKind, ReconnectRecord, WindowStats } from './realtime/session-events.js';
export type { SessionLogger, LogRecord, LogLevel, LogMethod } from './realtime/session-logger.js';
export type { WebSocketLike, WebSocketConstructor } from './realtime/socket/transport.js';

// --- live captions: engine, writers, session binding ---
export { CaptionEngine, type CaptionPartial, type CaptionLine } from './captions/caption-engine.js';
export { CAPTION_DEFAULTS, type CaptionOptions, type ResolvedCaptionOptions, type UnstableTail } from './captions/caption-options.js';
export { CaptionError, type CaptionErrorCode } from './errors/caption-error.js';
export type { Cue, CueChange } from './captions/cue.js';
export { WebVttWriter, SrtWriter, type TextSink } from './captions/cue-writers.js';
export { SegmentedWebVtt, type SegmentedWebVttOptions } from './captions/segmented-webvtt.js';
export { attachCaptions, type AttachCaptionsOptions, type AttachedCaptions, type CaptionEvents, type CaptionSource } from './captions/attach-captions.js';
