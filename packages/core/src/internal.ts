/**
 * @soundclone/core/internal: what the sibling packages (server, node-mic, web-audio, cli), the bench
 * and the tests share with core but an application should not build on. No compatibility promise:
 * names here change with the packages that use them. Public names stay in the main entry; import
 * those from `@soundclone/core`.
 *
 * The wire facts (paths, headers, statuses, error codes, limits, the socket's frame codec, messages and
 * close codes, the webhook signature scheme) are written once, in ./protocol.ts; the reference server
 * imports them from here so the two sides cannot drift apart (docs/protocol.md "Where the wire facts live").
 */

// --- the wire protocol, written once ---
export * from './protocol.js';
export type { TaskStatus } from './types/transcription.js';

// --- resource shapes, which the reference server types what it sends and reads with ---
export type { Token, Segment, Transcript, CharacterAlignment, TranscriptionOptions, ExportOptionsEntry } from './types/transcription.js';
export type { RealtimeSessionOptions, CreateRealtimeSessionParams } from './types/realtime.js';

// --- DSP design, measurement and the lower-level pieces (filter tables, test tones, fits for quality checks) ---
export { reduceRatio, type RateRatio } from './dsp/rates.js';
export { designPolyphase, QUALITY_PRESETS, type PolyphaseFilter } from './dsp/filter-design.js';
export { sine, fitTone, fitTones, snrAgainstSine, toDb, aliasOf, type ToneFit } from './dsp/measure.js';
export { encodePcm16Into } from './dsp/pcm16.js';
export { RingSegments } from './dsp/sample-ring.js';
// The voice gate's decisions: a session runs them through its `gate` option (the main entry exports the
// detector); a capture source that gates itself (the AudioWorklet) runs them where the audio is.
export { VoiceGate, VOICE_GATE_DEFAULTS, type VoiceGateOptions, type VoiceGateDecision } from './dsp/voice-gate.js';
export { EnergyVoiceDetector, type VoiceDetector, type EnergyDetectorOptions } from './dsp/voice-detector.js';
export { SessionGate, gateOptions, type GateStep, type SpeechEdge } from './realtime/audio/session-gate.js';
export { SkipLedger } from './realtime/audio/skip-ledger.js';
// A capture source that runs its own voice gate (the AudioWorklet) writes through RealtimeSocketSession.gateSource().
export { SourceClock, type SourceGateSink } from './realtime/audio/source-gate.js';

// --- seeded randomness (seeded data, test inputs, benchmark signals) ---
export { mulberry32 } from './util/prng.js';

// --- REST machinery ---
export { sniffVoiceFile } from './client/voices/sniff.js';
export { pollDelayMs } from './client/stt/task-polling.js';
export { checkCreateTranscription } from './client/stt/transcription-options.js';
export { apiErrorFromResponse, type HttpFailure } from './errors/api-errors.js';
export { backoffCeilingMs, backoffDelayMs, parseRetryAfterMs, retryDelayMs, DEFAULT_BACKOFF, type RetryDelayInput } from './http/retry-timing.js';
export { buildPath, encodeSegment, path } from './http/path.js';
export { classifyIPv4, classifyIPv6, ipv4Value, ipv6Groups, literalHostRefusal, type RefusalKind } from './http/address-policy.js';
export { parseDecimal, parseOptionalDecimal, toDecimalString, isDecimalString } from './util/decimal.js';
export { signWebhookPayload, timingSafeEqual } from './webhooks/hmac.js';
export { ReplayCache } from './webhooks/replay-cache.js';
export { parseSignatureHeader, type SignatureHeader } from './webhooks/signature-header.js';
export * as protocol from './protocol.js';

// --- realtime session machinery ---
export { socketUrlFor } from './realtime/realtime-session.js';
export { StateMachine, TRANSITIONS, TERMINAL_STATES } from './realtime/session-state.js';
export { LineStore } from './realtime/transcript/line-store.js';
export { AudioOutbox } from './realtime/audio/outbox.js';
export { parseServerMessage, type ParsedServerMessage } from './realtime/messages/server-messages.js';
export { ACK_WATCH } from './realtime/watch/ack-watch-options.js';
export { CLOSE_CLASSES, UPGRADE_CLASSES, classifyLoss } from './realtime/recovery/loss-classes.js';
export { redact } from './realtime/session-logger.js';
export { GuardedEmitter } from './realtime/plumbing/guarded-emitter.js';

// --- caption machinery (option checking, cue ids, ordering, time stamps) ---
export { resolveCaptionOptions } from './captions/caption-options.js';
export { cueId } from './captions/cue.js';
export { CueSequencer } from './captions/cue-sequencer.js';
export { vttTime, srtTime, vttCueBlock } from './captions/cue-writers.js';

// --- capture health: the measurements both capture adapters make (their types are public: types/capture-health.ts) ---
export {
  DriftEstimator, StarvationDetector, CaptureTimeline, blockLevel,
  type DriftEstimatorOptions, type StarvationOptions, type StarvationReading,
} from './util/capture-measures.js';
