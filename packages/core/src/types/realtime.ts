import type { TaskError } from './transcription.js';
/**
 * Real-time sessions over REST (spec "Real-time session"; creation is ours, docs/protocol.md).
 * Usage counters are decimal strings on the wire and `bigint` here.
 */

/** Spec "line fields". */
export interface RealtimeLine {
  readonly id: string;
  readonly text: string;
  readonly revisedText: string | null;
  readonly languageCode: string | null;
  readonly languageProbability: number | null;
  readonly entities: ReadonlyArray<Readonly<Record<string, unknown>>>;
  readonly words: ReadonlyArray<Readonly<Record<string, unknown>>>;
  readonly characterAlignments: ReadonlyArray<Readonly<Record<string, unknown>>>;
}

/**
 * Spec "notice fields": SUPPLEMENT_NOT_RECEIVED carries supplements and lineIds. Ours:
 * TRANSPORT_GAP, and BALANCE_EXHAUSTED with receivedSamples (the decimal sample position where the
 * account's balance was used up; nothing after it was accepted or charged).
 */
export interface RealtimeNotice {
  readonly code: 'SUPPLEMENT_NOT_RECEIVED' | 'PROCESSING_STORAGE_NOT_APPLIED' | 'TRANSPORT_GAP' | 'BALANCE_EXHAUSTED' | (string & {});
  readonly message: string;
  readonly supplements?: readonly string[];
  readonly lineIds?: readonly string[];
  readonly receivedSamples?: string;
}

/** Spec "usage fields". */
export interface RealtimeUsage {
  readonly estimatedCharacters: bigint;
  readonly billableCharacters: bigint;
  readonly elapsedMs: bigint;
  readonly sentSamples: bigint;
  readonly receivedSamples: bigint;
  readonly capturedSamples: bigint;
  readonly accepting: boolean;
}

/** Spec "Real-time session". status: ACTIVE | PAUSED | FINISHING while open (ours), else the task status. */
export interface RealtimeSession {
  readonly sessionId: string;
  readonly transcriptionId: string;
  readonly modelId?: string;
  readonly status: string;
  readonly epoch: number;
  readonly accepting: boolean;
  readonly partial: string;
  readonly lines: readonly RealtimeLine[];
  readonly notices: readonly RealtimeNotice[];
  readonly usage: RealtimeUsage;
  /** Ours (docs/protocol.md "Recovery window"): whether a socket can still resume the session. */
  readonly connection?: RealtimeConnection;
  /** A FAILED session's error, as data (e.g. RECOGNIZER_UNAVAILABLE: the service could not recognize). */
  readonly error?: TaskError;
}

/** Ours: the socket attachment of a session (docs/protocol.md "Recovery window"). */
export interface RealtimeConnection {
  /** A socket is attached now. */
  readonly attached: boolean;
  /** When the running recovery window ends (ISO 8601); null while a socket is attached. */
  readonly recoveryDeadline: string | null;
  /** The window passed: sockets are refused (4410), only a REST finish can save the result. */
  readonly recoveryExpired: boolean;
}

/** Ours: what session creation adds, the socket to stream audio to. */
export interface RealtimeSessionCreated extends RealtimeSession {
  readonly socket: { readonly url: string; readonly token: string; readonly expiresAt: string };
  readonly replayed: boolean;
  readonly idempotencyKey: string;
}

/** Ours: realtime session options (capabilities realtimeParameters). */
export interface RealtimeSessionOptions {
  readonly inputEncoding?: 'pcm_s16le_16';
  readonly segmentCommitMode?: 'auto' | 'manual';
  readonly includeAlignment?: boolean;
  readonly includeDetectedLanguage?: boolean;
  readonly entityCategories?: readonly string[];
  readonly rewriteInstruction?: string;
  readonly vocabularyHints?: readonly string[];
  readonly processingContentStorage?: boolean;
  readonly [other: string]: unknown;
}

export interface CreateRealtimeSessionParams {
  readonly title?: string;
  readonly languageHint?: string;
  readonly options?: RealtimeSessionOptions;
}
