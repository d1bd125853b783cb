/**
 * @soundclone/server: the reference Sound Clone service. `startServer` runs it in-process;
 * `protocol` holds the service's own decisions; the wire facts both sides share are
 * @soundclone/core's (`@soundclone/core/internal`).
 */
export { startServer, type RunningServer, type ServerOptions, type RequestLogEntry, type HttpLimits, type DrainOptions } from './server.js';
export type { MembershipTiming } from './nodes/membership.js';
export * as protocol from './protocol.js';
export { ApiError, type Violation } from './errors.js';
export { StateStoreError, isStateStoreError, type StateErrorCode } from './store/journal/state-error.js';
export type { StateReport } from './store/journal/journal-store.js';
export { StoreError, isStoreError, type StoreErrorCode } from './store/store.js';
export { LiveStateError, isLiveStateError, type LiveStateErrorCode } from './live/live-error.js';
export type { LiveTiming } from './live/live-store.js';
export type { FaultAction, FaultRule, FaultHandle, Faults } from './http/faults.js';
export type { AccountOverrides } from './domain/accounts/accounts.js';
export type {
  Recognizer, RecognizerStream, RecognitionOptions, RecognitionRequest, FedRecognitionRequest, ChannelFeed, RecognitionResult, ChannelRecognition, RecognizedSegment, RecognizedWord,
  StreamEvent, RecognizerCheckpoint,
} from './recognition/recognizer.js';
export type { EnergyTuning } from './recognition/energy-analyzer.js';
export { EnergyRecognizer } from './recognition/energy-recognizer.js';
export { PocketSphinxRecognizer, type PocketSphinxOptions } from './recognition/pocketsphinx/pocketsphinx-recognizer.js';
export { chooseRecognizer, RECOGNIZER_CHOICES, type RecognizerChoice, type ChosenRecognizer } from './recognition/select.js';
export { RecognizerError, isRecognizerError, type RecognizerErrorCode } from './recognition/errors.js';
export {
  SessionAudio, type FeedOutcome, type SessionEvent, type SessionNotice, type SupplementKind, type SupplementPolicy, type SupplementDecision, type RotationSchedule,
  type Line, type LineWord, type AudioRetention, type ResumeOutcome, type SpendingGuard, type RestoredAudio,
} from './realtime/session/audio.js';
export type { RealtimeOptions } from './realtime/session/options.js';
export type { AudioObserver, AcceptedAudio } from './realtime/session/audio-observer.js';
export type { RealtimeTiming } from './realtime/session/sessions.js';
export type { SocketConfig, SocketLogEntry } from './realtime/socket/config.js';
export type { SocketFaults, SocketFaultRule, SocketFaultHandle, SocketFaultTarget, AckMode } from './realtime/socket/faults.js';
export type { Clock, TimedClock } from './util/clock.js';
export type { TokenAging } from './realtime/session/token-aging.js';
export type { TaskTiming } from './domain/transcriptions/runner.js';
export type { LeaseTiming } from './domain/transcriptions/batch-worker.js';
export { refusalForAddress, refusalForName } from './media/address-policy.js';
export { signWebhook } from './webhooks/signing.js';
export { parseServerFlags, SERVER_USAGE, SERVER_FLAG_OPTIONS, ServerFlagError, isServerFlagError, type ServerFlags } from './cli-flags.js';
export { ChaosProxy } from './testing/chaos-proxy.js';
export { LocalRedis, LocalRedisError, isLocalRedisError, findRedisServer, type LocalRedisErrorCode } from './cluster/local-redis.js';
export { LocalPostgres, LocalPostgresError, isLocalPostgresError, createDatabase, type LocalPostgresOptions, type LocalPostgresErrorCode } from './cluster/local-postgres.js';
export { LocalCluster, type LocalClusterOptions } from './cluster/local-cluster.js';
export { LocalClusterError, isLocalClusterError, type LocalClusterErrorCode } from './cluster/cluster-error.js';
export type { ClusterNode } from './cluster/cluster-node.js';
export type { HealthCheck } from './cluster/haproxy.js';
export { parseClusterFlags, CLUSTER_USAGE, type ClusterFlags } from './cluster/cluster-flags.js';
