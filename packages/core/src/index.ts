export { SoundCloneError, isSoundCloneError } from './errors/base.js';
export { DspError, isDspError, type DspErrorCode } from './errors/dsp-error.js';

export { SUPPORTED_RATES, isSupportedRate, reduceRatio, type SupportedRate, type RateRatio } from './dsp/rates.js';
export { QUALITY_PRESETS, designPolyphase, type PolyphaseFilter, type ResamplerQuality, type QualityPreset } from './dsp/filter-design.js';
export { Resampler, type ResamplerOptions, type ResamplerKernel, type NonFinitePolicy, type SampleBlock } from './dsp/resampler.js';
export { encodePcm16, encodePcm16Into, decodePcm16, type Pcm16Options, type Pcm16NonFinite } from './dsp/pcm16.js';
export {
  SampleRing, RingSegments, type SampleKind, type SampleRingOptions, type SampleRingHandle, type RingViews,
} from './dsp/sample-ring.js';
export type { SampleArrayOf } from './dsp/ring-types.js';
export { EncodePipeline, type EncodePipelineOptions, type EncodedFrame } from './dsp/encode-pipeline.js';
export { sine, fitTone, fitTones, snrAgainstSine, toDb, aliasOf, type ToneFit } from './dsp/measure.js';

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
export { PageRequest, type Pager, type Cursor } from './client/pagination.js';
export type { CreateVoiceParams, SaveDesignParams } from './client/resources/voices.js';
export type { VoiceFileInput } from './client/voices/voice-files.js';
export { sniffVoiceFile, type VoiceFileType } from './client/voices/sniff.js';
export type { UploadSource, UploadOptions, DownloadResult } from './client/resources/media.js';
export type { CreateTranscriptionOptions, WaitOptions } from './client/stt/transcriptions.js';
export { isTerminalStatus, pollDelayMs, type PollOptions } from './client/stt/task-polling.js';
export { checkCreateTranscription } from './client/stt/transcription-options.js';
export {
  ApiError, AuthenticationError, NotFoundError, IdempotencyConflictError, InputInvalidError, MediaFetchError, RateLimitError,
  InsufficientCharactersError, QuotaExceededError, ServiceUnavailableError, ServerError, apiErrorFromResponse,
  type Violation, type ApiErrorInit, type HttpFailure,
} from './errors/api-errors.js';
export {
  ConnectionError, RequestTimeoutError, AbortError, ValidationError, WaitTimeoutError, ResponseFormatError, BatchIncompleteError,
  type ResponseFormatCode,
} from './errors/client-errors.js';
export { WebhookVerificationError, type WebhookErrorCode } from './errors/webhook-errors.js';
export * from './errors/guards.js';
export { backoffCeilingMs, backoffDelayMs, parseRetryAfterMs, retryDelayMs, DEFAULT_BACKOFF, type BackoffPolicy, type RetryDelayInput } from './http/retry-timing.js';
export { buildPath, encodeSegment, path } from './http/path.js';
export { classifyIPv4, classifyIPv6, ipv4Value, ipv6Groups, literalHostRefusal, type RefusalKind } from './http/address-policy.js';
export { parseDecimal, parseOptionalDecimal, toDecimalString, isDecimalString, type CountInput } from './util/decimal.js';
export { verifyWebhook, type VerifyOptions, type VerifiedWebhook } from './webhooks/verify.js';
export { createWebhookVerifier, type WebhookVerifier, type WebhookVerifierOptions } from './webhooks/verifier.js';
export { signWebhookPayload, timingSafeEqual } from './webhooks/hmac.js';
export { parseSignatureHeader, type HeaderBag, type SignatureHeader } from './webhooks/signature-header.js';
export { ReplayCache } from './webhooks/replay-cache.js';
export type { WebhookEvent } from './webhooks/event.js';
export * as protocol from './protocol.js';
export type * from './types/account.js';
export type * from './types/transcription.js';
export type * from './types/realtime.js';
export type * from './types/media.js';

// --- realtime session ---
export { RealtimeSocketSession, socketUrlFor } from './realtime/realtime-session.js';
export type { RealtimeSocketOptions, RealtimeSessionInit, RealtimeRest, OperationOptions } from './realtime/session-options.js';
export type { SessionObservables } from './realtime/session-streams.js';
export type { RealtimeConnectParams, RealtimeAttachParams } from './client/stt/realtime.js';
export { DefaultReconnectPolicy, type ReconnectPolicy, type ReconnectContext, type DefaultReconnectPolicyOptions } from './realtime/reconnect-policy.js';
export { RealtimeError, isRealtimeError, type RealtimeErrorCode } from './realtime/realtime-error.js';
export { StateMachine, TRANSITIONS, TERMINAL_STATES, type SessionState, type StateChange } from './realtime/session-state.js';
export { LineStore, type SessionLine, type LineUpdate, type SupplementKind, type SupplementMessage } from './realtime/line-store.js';
export { AudioOutbox, type AudioStats, type Gap } from './realtime/audio-outbox.js';
export { parseServerMessage, type ServerMessage, type ParsedServerMessage, type WireLine } from './realtime/server-messages.js';
export type {
  SessionReadyMessage, AudioAckMessage, PartialMessage, LineMessage, AlignmentMessage, EntitiesMessage, RevisionMessage, LanguageMessage,
  UsageUpdatedMessage, NoticeMessage, PausedMessage, ResumedMessage, FinishedMessage, SocketErrorMessage, PingMessage, PongMessage,
} from './realtime/server-messages.js';
export type { RealtimeSessionEvents, SessionOwnEvents, ServerMessageEvents, RealtimeFinishResult } from './realtime/session-events.js';
export type { WebSocketLike, WebSocketConstructor } from './realtime/socket-transport.js';
